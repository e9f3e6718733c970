// Genotype blocks for Python (vczstats/blocks.hpp): host blocks become numpy arrays over the
// block's own memory; device blocks become DeviceArray objects exposing __dlpack__ (a DLPack
// capsule written here, no DLPack or CuPy headers needed) and __cuda_array_interface__, so
// cupy.from_dlpack / cupy.asarray / torch.from_dlpack take them without a copy.

#include <pybind11/stl.h>

#include <mutex>
#include <optional>
#include <string>

#include "bindings.hpp"
#include "vczstats/blocks.hpp"
#include "vczstats/error.hpp"

namespace vczstats::python {
namespace {

// ---- DLPack (v0.8 ABI, the unversioned DLManagedTensor every consumer accepts) ----------------
// https://github.com/dmlc/dlpack/blob/v0.8/include/dlpack/dlpack.h

enum DLDeviceType : std::int32_t { kDLCPU = 1, kDLCUDA = 2 };
enum DLDataTypeCode : std::uint8_t { kDLInt = 0 };
struct DLDevice {
  DLDeviceType device_type;
  std::int32_t device_id;
};
struct DLDataType {
  std::uint8_t code;
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // null: C order
  std::uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

/// @brief Signed integers in host or device memory, kept alive by an owner: what a genotype
/// block hands to Python when numpy cannot hold it (device memory), and the object whose
/// protocol methods (DLPack, CUDA array interface) the tests check on the host.
struct DeviceArray {
  std::shared_ptr<void> owner;
  void* data = nullptr;
  std::vector<std::int64_t> shape;
  int elem_bytes = 1;
  DLDeviceType device_type = kDLCPU;
  int device_id = 0;

  std::int64_t size() const {
    std::int64_t n = 1;
    for (auto s : shape) n *= s;
    return n;
  }
  std::string typestr() const {
    return (elem_bytes == 1 ? "|i" : "<i") + std::to_string(elem_bytes);
  }
  std::string device() const {
    return device_type == kDLCUDA ? "gpu:" + std::to_string(device_id) : "cpu";
  }
};

/// What a DLPack capsule owns: the array's owner and shape, and the tensor pointing at them.
struct DLPackHolder {
  std::shared_ptr<void> owner;
  std::vector<std::int64_t> shape;
  DLManagedTensor tensor{};
};

void delete_holder(DLManagedTensor* self) {
  std::unique_ptr<DLPackHolder>(static_cast<DLPackHolder*>(self->manager_ctx));
}

/// The capsule of the DLPack protocol: named "dltensor"; a consumer renames it "used_dltensor"
/// and calls the deleter itself, else the capsule's destructor calls it.
py::capsule dlpack_capsule(const DeviceArray& a) {
  auto holder = std::make_unique<DLPackHolder>();
  holder->owner = a.owner;
  holder->shape = a.shape;
  DLTensor& t = holder->tensor.dl_tensor;
  t.data = a.data;
  t.device = {a.device_type, a.device_id};
  t.ndim = static_cast<std::int32_t>(holder->shape.size());
  t.dtype = {kDLInt, static_cast<std::uint8_t>(8 * a.elem_bytes), 1};
  t.shape = holder->shape.data();
  t.strides = nullptr;
  t.byte_offset = 0;
  holder->tensor.manager_ctx = holder.get();
  holder->tensor.deleter = &delete_holder;
  DLManagedTensor* managed = &holder->tensor;
  PyObject* capsule = PyCapsule_New(managed, "dltensor", [](PyObject* self) {
    if (!PyCapsule_IsValid(self, "dltensor")) return;  // consumed: the consumer deletes it
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(self, "dltensor"));
    if (m && m->deleter) m->deleter(m);
  });
  if (!capsule) throw py::error_already_set();
  holder.release();  // the capsule owns it now
  return py::reinterpret_steal<py::capsule>(capsule);
}

/// The object of numpy's array protocol for host memory (no copy).
py::array host_view(const DeviceArray& a) {
  if (a.device_type != kDLCPU)
    throw py::type_error("a DeviceArray in device memory (" + a.device() +
                         ") has no host view: use cupy.from_dlpack(x) or cupy.asarray(x)");
  std::vector<py::ssize_t> shape(a.shape.begin(), a.shape.end());
  return array_over(int_dtype(a.elem_bytes), std::move(shape), a.data, a.owner);
}

py::dict cuda_array_interface(const DeviceArray& a) {
  if (a.device_type != kDLCUDA)
    throw py::attribute_error("__cuda_array_interface__: the array is in host memory");
  py::dict d;
  py::tuple shape(a.shape.size());
  for (std::size_t i = 0; i < a.shape.size(); ++i) shape[i] = a.shape[i];
  d["shape"] = shape;
  d["typestr"] = a.typestr();
  d["data"] = py::make_tuple(reinterpret_cast<std::uintptr_t>(a.data), false);
  d["strides"] = py::none();
  // No "stream" key: the data is complete before the array is handed out.
  d["version"] = 3;
  return d;
}

// ---- blocks ------------------------------------------------------------------------------------

py::object genotypes_of(const GenotypeBlock& b) {
  std::vector<std::int64_t> shape{b.rows(), b.samples, b.ploidy};
  if (!b.on_device)
    return array_over(int_dtype(b.elem_bytes), {shape.begin(), shape.end()}, b.data, b.owner);
  DeviceArray a;
  a.owner = b.owner;
  a.data = b.data;
  a.shape = shape;
  a.elem_bytes = b.elem_bytes;
  a.device_type = kDLCUDA;
  a.device_id = b.device;
  return py::cast(std::move(a));
}

py::dict block_to_python(const GenotypeBlock& b) {
  py::dict d;
  d["unit"] = b.unit;
  d["genotypes"] = genotypes_of(b);
  d["variant"] = copy_array(b.variant);
  d["contig"] = copy_array(b.contig);
  d["position"] = copy_array(b.position);
  return d;
}

/// One consumer at a time: next() runs without the GIL, so two Python threads could enter.
struct BlockSource {
  std::unique_ptr<GenotypeBlockStream> stream;
  std::mutex mutex;
};

BlockStreamOptions block_options(unsigned threads, unsigned prefetch, const std::string& device) {
  return {threads, prefetch, parse_device(device)};
}

}  // namespace

void bind_blocks(py::module_& m) {
  py::class_<DeviceArray>(m, "DeviceArray",
                          "Genotypes in device (or host) memory: exposes __dlpack__, "
                          "__dlpack_device__ and, in device memory, __cuda_array_interface__, "
                          "so cupy.from_dlpack(x) takes it without a copy.")
      .def_property_readonly("shape",
                             [](const DeviceArray& a) {
                               py::tuple t(a.shape.size());
                               for (std::size_t i = 0; i < a.shape.size(); ++i) t[i] = a.shape[i];
                               return t;
                             })
      .def_property_readonly("ndim", [](const DeviceArray& a) { return a.shape.size(); })
      .def_property_readonly("dtype", [](const DeviceArray& a) { return int_dtype(a.elem_bytes); })
      .def_property_readonly("nbytes", [](const DeviceArray& a) { return a.size() * a.elem_bytes; })
      .def_property_readonly(
          "ptr", [](const DeviceArray& a) { return reinterpret_cast<std::uintptr_t>(a.data); })
      .def_property_readonly("device", &DeviceArray::device)
      .def("__len__", [](const DeviceArray& a) { return a.shape.empty() ? 0 : a.shape[0]; })
      .def(
          "__dlpack__",
          [](const DeviceArray& a, py::object stream, py::kwargs) {
            // Host memory takes no stream; device data is complete when handed out, so any
            // consumer stream may read it at once.
            if (a.device_type == kDLCPU && !stream.is_none())
              throw py::buffer_error("__dlpack__: a host array takes stream=None");
            return dlpack_capsule(a);
          },
          py::arg("stream") = py::none())
      .def("__dlpack_device__",
           [](const DeviceArray& a) {
             return py::make_tuple(static_cast<int>(a.device_type), a.device_id);
           })
      .def_property_readonly("__cuda_array_interface__", &cuda_array_interface)
      .def(
          "__array__", [](const DeviceArray& a, py::object) { return host_view(a); },
          py::arg("dtype") = py::none())
      .def("__repr__", [](const DeviceArray& a) {
        std::string s = "DeviceArray(shape=(";
        for (std::size_t i = 0; i < a.shape.size(); ++i)
          s += (i ? ", " : "") + std::to_string(a.shape[i]);
        return s + "), dtype=int" + std::to_string(8 * a.elem_bytes) + ", device=" + a.device() +
               ")";
      });

  // For tests of the protocol objects without a GPU: a DeviceArray over a numpy array's memory,
  // labelled as living on (device_type, device_id). Never dereference a fake device pointer.
  m.def(
      "_device_array_over",
      [](py::array array, int device_type, int device_id) {
        if (!(array.flags() & py::array::c_style) || array.dtype().kind() != 'i')
          throw UsageError("_device_array_over: a C-contiguous signed integer array is needed");
        DeviceArray a;
        auto keep = std::make_unique<py::object>(array);
        a.owner = std::shared_ptr<void>(keep.release(), [](void* p) {
          py::gil_scoped_acquire gil;  // DLPack deleters may run on any thread
          std::unique_ptr<py::object>(static_cast<py::object*>(p));
        });
        a.data = array.mutable_data();
        for (py::ssize_t i = 0; i < array.ndim(); ++i) a.shape.push_back(array.shape(i));
        a.elem_bytes = static_cast<int>(array.itemsize());
        if (device_type != kDLCPU && device_type != kDLCUDA)
          throw UsageError("_device_array_over: device_type 1 (CPU) or 2 (CUDA)");
        a.device_type = static_cast<DLDeviceType>(device_type);
        a.device_id = device_id;
        return a;
      },
      py::arg("array"), py::arg("device_type") = 1, py::arg("device_id") = 0);

  py::class_<BlockSource>(m, "BlockStream",
                          "Genotype blocks of a query in plan order (GenotypeBlockStream).")
      .def(py::init(
               [](const Query& q, unsigned threads, unsigned prefetch, const std::string& device) {
                 const BlockStreamOptions o = block_options(threads, prefetch, device);
                 auto s = std::make_unique<BlockSource>();
                 py::gil_scoped_release release;
                 s->stream = std::make_unique<GenotypeBlockStream>(q, o);
                 return s;
               }),
           py::arg("query"), py::arg("threads") = 0, py::arg("prefetch") = 0,
           py::arg("device") = "cpu", py::keep_alive<1, 2>())
      .def("__len__", [](const BlockSource& s) { return s.stream->size(); })
      .def_property_readonly("variants", [](const BlockSource& s) { return s.stream->variants(); })
      .def_property_readonly("samples", [](const BlockSource& s) { return s.stream->samples(); })
      .def_property_readonly("ploidy", [](const BlockSource& s) { return s.stream->ploidy(); })
      .def_property_readonly("dtype",
                             [](const BlockSource& s) { return int_dtype(s.stream->elem_bytes()); })
      .def_property_readonly("device",
                             [](const BlockSource& s) {
                               return s.stream->on_device()
                                          ? "gpu:" + std::to_string(s.stream->device())
                                          : std::string("cpu");
                             })
      .def("next",
           [](BlockSource& s) -> py::object {
             std::optional<GenotypeBlock> b;
             {
               py::gil_scoped_release release;
               std::lock_guard lock(s.mutex);
               b = s.stream->next();
             }
             if (!b) return py::none();
             return block_to_python(*b);
           })
      .def("close", [](BlockSource& s) {
        py::gil_scoped_release release;
        std::lock_guard lock(s.mutex);
        s.stream->close();
      });

  m.def(
      "materialize",
      [](const Query& q, unsigned threads, unsigned prefetch, const std::string& device) {
        const BlockStreamOptions o = block_options(threads, prefetch, device);
        GenotypeBlock b;
        {
          py::gil_scoped_release release;
          b = materialize(q, o);
        }
        return block_to_python(b);
      },
      py::arg("query"), py::arg("threads") = 0, py::arg("prefetch") = 0, py::arg("device") = "cpu");
}

}  // namespace vczstats::python
