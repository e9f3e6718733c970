// vczstats._core: the library's objects for Python. Stores, queries (make_query), the statistic
// factories and compute() (the library's Runner, as the CLI runs a statistic), whose tables come
// back as numpy columns; errors as Python exceptions (UsageError -> ValueError, IoError ->
// OSError, FormatError and CudaError -> RuntimeError); the GIL is released while anything is
// read or computed. The Python layer (python/vczstats) turns the columns into results,
// DataFrames and xarray Datasets.

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <chrono>
#include <optional>
#include <string>

#include "bindings.hpp"
#include "vczstats/device.hpp"
#include "vczstats/error.hpp"
#include "vczstats/query.hpp"
#include "vczstats/runner.hpp"
#include "vczstats/statistics.hpp"
#include "vczstats/testing.hpp"
#include "vczstats/thread_pool.hpp"
#include "vczstats/variants.hpp"

#ifdef VCZSTATS_HAVE_MPI
#include "dist/ranks.hpp"
#endif

namespace vczstats::python {

py::array array_over(const py::dtype& dtype, std::vector<py::ssize_t> shape, const void* data,
                     std::shared_ptr<void> owner) {
  if (!data) return py::array(dtype, std::move(shape));
  // The capsule owns a copy of the shared pointer; numpy drops the capsule with the array.
  auto holder = std::make_unique<std::shared_ptr<void>>(std::move(owner));
  py::capsule base(holder.get(), [](void* p) {
    std::unique_ptr<std::shared_ptr<void>>(static_cast<std::shared_ptr<void>*>(p));
  });
  holder.release();
  return py::array(dtype, std::move(shape), data, base);
}

py::dtype int_dtype(int bytes) {
  switch (bytes) {
    case 1:
      return py::dtype::of<std::int8_t>();
    case 2:
      return py::dtype::of<std::int16_t>();
    case 4:
      return py::dtype::of<std::int32_t>();
    case 8:
      return py::dtype::of<std::int64_t>();
  }
  throw FormatError("genotype integers of " + std::to_string(bytes) + " bytes");
}

namespace {

// ---- errors ------------------------------------------------------------------------------------

/// A new exception class vczstats._core.<name> with the given bases (a tuple), added to @p m.
PyObject* exception_class(py::module_& m, const char* name, py::tuple bases) {
  const std::string qualified = std::string("vczstats._core.") + name;
  PyObject* type = PyErr_NewException(qualified.c_str(), bases.ptr(), nullptr);
  if (!type) throw py::error_already_set();
  m.add_object(name, py::handle(type));  // the module keeps the reference
  return type;
}

void register_errors(py::module_& m) {
  // Error is the base of them all; each is also the built-in exception users expect, so
  // `except ValueError` catches a UsageError. The module owns the classes for the process.
  static PyObject* error = exception_class(m, "Error", py::make_tuple(py::handle(PyExc_Exception)));
  const auto with = [](PyObject* builtin) {
    return py::make_tuple(py::handle(error), py::handle(builtin));
  };
  static PyObject* usage = exception_class(m, "UsageError", with(PyExc_ValueError));
  static PyObject* io = exception_class(m, "IoError", with(PyExc_OSError));
  static PyObject* format = exception_class(m, "FormatError", with(PyExc_RuntimeError));
  static PyObject* cuda = exception_class(m, "CudaError", with(PyExc_RuntimeError));
  static PyObject* internal = exception_class(m, "InternalError", with(PyExc_RuntimeError));
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const UsageError& e) {
      PyErr_SetString(usage, e.what());
    } catch (const IoError& e) {
      PyErr_SetString(io, e.what());
    } catch (const FormatError& e) {
      PyErr_SetString(format, e.what());
    } catch (const CudaError& e) {
      PyErr_SetString(cuda, e.what());
    } catch (const Error& e) {
      PyErr_SetString(internal, e.what());
    } catch (const std::filesystem::filesystem_error& e) {
      PyErr_SetString(io, e.what());
    }
  });
}

// ---- stores ------------------------------------------------------------------------------------

/// What `vczstats info --format json` reports of the arrays, for Store.info().
py::list array_info(const vcz::VczStore& s) {
  py::list arrays;
  for (const auto& name : s.array_names()) {
    const auto arr = s.array(name);
    std::int64_t stored = 0, present = 0, total = 1;
    for (int d = 0; d < arr->ndim(); ++d) total *= arr->num_chunks(d);
    for (const auto& e : s.store().list(name + "/")) {
      const auto leaf = e.key.substr(e.key.rfind('/') + 1);
      if (leaf == ".zarray" || leaf == ".zattrs" || leaf == "zarr.json") continue;
      stored += static_cast<std::int64_t>(e.stored_size);
      ++present;
    }
    py::dict a;
    a["name"] = name;
    a["dtype"] = arr->dtype().name();
    a["shape"] = arr->shape();
    a["chunks"] = arr->chunks();
    a["codecs"] = arr->metadata().codecs;
    a["stored_bytes"] = stored;
    a["chunks_present"] = present;
    a["chunks_total"] = total;
    arrays.append(a);
  }
  return arrays;
}

std::vector<std::string> visible_samples(const vcz::VczStore& s) {
  std::vector<std::string> out;
  for (const auto& id : s.sample_ids())
    if (!id.empty()) out.emplace_back(id);
  return out;
}

void bind_store(py::module_& m) {
  py::class_<vcz::VczStore>(m, "VczStore", "An opened VCF Zarr store (directory or zip).")
      .def(py::init([](const std::string& path) {
             py::gil_scoped_release release;
             return vcz::VczStore::open(path);
           }),
           py::arg("path"))
      .def_property_readonly("path", &vcz::VczStore::path)
      .def_property_readonly("samples", &visible_samples)
      .def_property_readonly("hidden_samples",
                             [](const vcz::VczStore& s) {
                               return static_cast<std::int64_t>(s.sample_ids().size()) -
                                      static_cast<std::int64_t>(visible_samples(s).size());
                             })
      .def_property_readonly("contigs", &vcz::VczStore::contig_ids)
      .def_property_readonly("contig_lengths", &vcz::VczStore::contig_lengths)
      .def_property_readonly("num_variants", &vcz::VczStore::num_variants)
      .def_property_readonly("ploidy", &vcz::VczStore::ploidy)
      .def_property_readonly("zarr_format", &vcz::VczStore::zarr_format)
      .def_property_readonly("vcf_zarr_version", &vcz::VczStore::vcf_zarr_version)
      .def_property_readonly("has_genotypes", &vcz::VczStore::has_genotypes)
      .def_property_readonly("source",
                             [](const vcz::VczStore& s) -> std::string {
                               const auto& a = s.attributes();
                               const auto it = a.find("source");
                               return it != a.end() && it->is_string() ? it->get<std::string>()
                                                                       : "";
                             })
      .def("arrays", &array_info, "Every array: name, dtype, shape, chunks, codecs, stored bytes.")
      .def(
          "phasing",
          [](const vcz::VczStore& s, unsigned threads) {
            vcz::Phasing p;
            {
              py::gil_scoped_release release;
              ThreadPool pool(threads);
              p = vcz::count_phasing(s, pool);
            }
            py::dict d;
            d["state"] = p.describe(s);
            d["calls"] = p.calls;
            d["unphased_calls"] = p.unphased;
            d["chunks_read"] = p.chunks_read;
            d["chunks_total"] = p.chunks_total;
            return d;
          },
          py::arg("threads") = 0,
          "Phasing of the calls, as `vczstats info` reports it (vcz::count_phasing).");
}

// ---- queries -----------------------------------------------------------------------------------

/// The site filters of a dict keyed by the CLI's option names with underscores (snps_only,
/// min_alleles, max_alleles, apply_filters, min_qual, maf, max_maf, mac, max_mac, geno, hwe,
/// hwe_midp, min_gq, min_dp, include, exclude). @throws UsageError for another key.
VariantFilterOptions filter_options(const py::dict& d) {
  VariantFilterOptions f;
  for (const auto& [key, value] : d) {
    const auto k = py::cast<std::string>(key);
    if (value.is_none()) continue;
    if (k == "snps_only")
      f.snps_only = py::cast<bool>(value);
    else if (k == "hwe_midp")
      f.hwe_midp = py::cast<bool>(value);
    else if (k == "min_alleles")
      f.min_alleles = py::cast<int>(value);
    else if (k == "max_alleles")
      f.max_alleles = py::cast<int>(value);
    else if (k == "apply_filters")
      f.apply_filters = py::isinstance<py::str>(value)
                            ? vcz::split_list(py::cast<std::string>(value))
                            : py::cast<std::vector<std::string>>(value);
    else if (k == "min_qual")
      f.min_qual = py::cast<double>(value);
    else if (k == "maf")
      f.maf = py::cast<double>(value);
    else if (k == "max_maf")
      f.max_maf = py::cast<double>(value);
    else if (k == "mac")
      f.mac = py::cast<std::int64_t>(value);
    else if (k == "max_mac")
      f.max_mac = py::cast<std::int64_t>(value);
    else if (k == "geno")
      f.geno = py::cast<double>(value);
    else if (k == "hwe")
      f.hwe = py::cast<double>(value);
    else if (k == "min_gq")
      f.min_gq = py::cast<int>(value);
    else if (k == "min_dp")
      f.min_dp = py::cast<int>(value);
    else if (k == "include")
      f.include = py::cast<std::string>(value);
    else if (k == "exclude")
      f.exclude = py::cast<std::string>(value);
    else
      throw UsageError("filters: unknown filter '" + k +
                       "' (snps_only, min_alleles, max_alleles, apply_filters, min_qual, maf, "
                       "max_maf, mac, max_mac, geno, hwe, hwe_midp, min_gq, min_dp)");
  }
  return f;
}

Query query_of(const std::string& store, const std::string& regions,
               const std::string& regions_file, const std::string& overlap,
               const std::vector<std::string>& samples, const std::string& samples_file,
               bool force_samples, const std::vector<std::pair<std::string, std::string>>& pops,
               const std::string& pops_file, const std::string& pop_column,
               std::int64_t window_size, std::int64_t window_step, std::int64_t window_variants,
               const std::string& windows_file, const std::string& ancestral,
               const std::string& accessible, std::int64_t max_unit_variants,
               const std::string& window_span, const py::dict& filters) {
  QueryOptions o;
  o.filters = filter_options(filters);
  o.store = store;
  o.regions = regions;
  o.regions_file = regions_file;
  if (overlap != "record" && overlap != "pos")
    throw UsageError("regions_overlap must be 'record' or 'pos', not '" + overlap + "'");
  o.overlap = overlap == "pos" ? vcz::RegionOverlap::Pos : vcz::RegionOverlap::Record;
  o.samples = samples;
  o.samples_file = samples_file;
  o.force_samples = force_samples;
  for (const auto& [sample, pop] : pops) o.pops.push_back({sample, pop});
  o.pops_file = pops_file;
  o.pop_column = pop_column;
  if (window_span != "data" && window_span != "contig")
    throw UsageError("window span must be 'data' or 'contig', not '" + window_span + "'");
  o.windows = {window_size, window_step, window_variants, windows_file,
               window_span == "contig" ? stats::WindowSpan::Contig : stats::WindowSpan::Data};
  o.ancestral = ancestral;
  o.accessible = accessible;
  py::gil_scoped_release release;
  // Count filters stay pending: compute() gets them ready (vczstats::Runner).
  return hooks::make_query(o, max_unit_variants);  // (a testing option: vczstats/testing.hpp)
}

void bind_query(py::module_& m) {
  py::class_<Query>(m, "Query", "A built query: store, selected variants, samples, populations.")
      .def_property_readonly("store", [](const Query& q) { return q.store; })
      .def_property_readonly("samples",
                             [](const Query& q) {
                               std::vector<std::string> names;
                               for (auto i : q.samples.indices)
                                 names.emplace_back(q.store.sample_ids()[i]);
                               return names;
                             })
      .def_property_readonly("sample_indices", [](const Query& q) { return q.samples.indices; })
      .def_property_readonly("populations", [](const Query& q) { return q.pops.names; })
      .def_property_readonly("population_of", [](const Query& q) { return q.pops.of; })
      .def_property_readonly("selected_variants",
                             [](const Query& q) { return q.plan.selected_variants(); })
      .def_property_readonly(
          "units", [](const Query& q) { return static_cast<std::int64_t>(q.plan.units.size()); })
      .def_property_readonly("warnings", [](const Query& q) { return q.warnings; });
  m.def("make_query", &query_of, py::arg("store"), py::arg("regions") = "",
        py::arg("regions_file") = "", py::arg("regions_overlap") = "record",
        py::arg("samples") = std::vector<std::string>{}, py::arg("samples_file") = "",
        py::arg("force_samples") = false,
        py::arg("pops") = std::vector<std::pair<std::string, std::string>>{},
        py::arg("pops_file") = "", py::arg("pop_column") = "", py::arg("window_size") = 0,
        py::arg("window_step") = 0, py::arg("window_variants") = 0, py::arg("windows_file") = "",
        py::arg("ancestral") = "ref", py::arg("accessible") = "", py::arg("max_unit_variants") = 0,
        py::arg("window_span") = "data", py::arg("filters") = py::dict(),
        "Open the store and build the query (vczstats::make_query), with the site filters of "
        "the dict filters (docs/filters.md). Count filters (maf, geno, hwe, include/exclude of "
        "counts, ...) are left pending for compute(), which applies them as the CLI does.");
  m.def(
      "read_populations",
      [](const std::string& path, const std::string& column) {
        const auto f = vcz::read_populations_file(path, column);
        std::vector<std::pair<std::string, std::string>> out;
        out.reserve(static_cast<std::size_t>(f.size()));
        for (std::int64_t k = 0; k < f.size(); ++k)
          out.emplace_back(
              std::string(f.samples[k]),
              f.names[static_cast<std::size_t>(f.population[static_cast<std::size_t>(k)])]);
        return out;
      },
      py::arg("path"), py::arg("column") = "",
      "(sample, population) entries of a populations file, in file order, read as -P reads it "
      "(two columns, plink's FID IID POP, or a header naming the columns).");
}

// ---- statistics --------------------------------------------------------------------------------

SiteTable site_table_kind(const std::string& kind) {
  if (kind == "freq") return SiteTable::Freq;
  if (kind == "geno-counts") return SiteTable::GenoCounts;
  if (kind == "hardy") return SiteTable::Hardy;
  if (kind == "missing") return SiteTable::Missing;
  throw UsageError("unknown site table '" + kind + "' (freq, geno-counts, hardy, missing)");
}

void bind_statistics(py::module_& m) {
  py::class_<Statistic>(m, "Statistic", "A statistic's light level (vczstats::Statistic).")
      .def_property_readonly("name", &Statistic::name);
  py::class_<AfdistStatistic, Statistic>(m, "AfdistStatistic")
      .def("sites", [](const AfdistStatistic& s) { return s.result().sites; });
  // Every statistic keeps its query alive (it holds a reference to it).
  const auto keep = py::keep_alive<0, 1>();
  m.def(
      "make_afdist",
      [](const Query& q, const std::string& method, int bins) {
        stats::AfdistOptions o;
        o.method = stats::parse_afdist_method(method);
        if (bins < 1) throw UsageError("afdist: bins must be at least 1");
        o.bins = bins;
        return make_afdist(q, o);
      },
      py::arg("query"), py::arg("method") = "bcftools", py::arg("bins") = 10, keep);
  m.def(
      "make_site_table",
      [](const Query& q, const std::string& kind) {
        return make_site_table(q, site_table_kind(kind));
      },
      py::arg("query"), py::arg("kind"), keep);
  m.def("make_diversity", &make_diversity, py::arg("query"), keep);
  m.def("make_divergence", &make_divergence, py::arg("query"), py::arg("pairs") = "", keep);
  m.def(
      "make_scan",
      [](const Query& q, const std::vector<std::string>& statistics, const std::string& pairs,
         const std::string& pbs) {
        return make_scan(q, {statistics, pairs, pbs});
      },
      py::arg("query"), py::arg("statistics"), py::arg("pairs") = "", py::arg("pbs") = "", keep);
  m.def(
      "make_sfs",
      [](const Query& q, bool folded, bool scaled, const std::string& joint,
         const std::string& project, bool preview, std::int64_t memory_mb) {
        SfsOptions o;
        o.folded = folded;
        o.scaled = scaled;
        o.joint = joint;
        o.project = project;
        o.preview = preview;
        o.memory_mb = memory_mb;
        return make_sfs(q, o);
      },
      py::arg("query"), py::arg("folded") = false, py::arg("scaled") = false, py::arg("joint") = "",
      py::arg("project") = "", py::arg("preview") = false, py::arg("memory_mb") = 1024, keep);
  m.def(
      "make_fstats",
      [](const Query& q, const std::string& f2, const std::string& f3, const std::string& d,
         std::int64_t blocks) {
        if (!f2.empty() + !f3.empty() + !d.empty() != 1)
          throw UsageError("fstats: give exactly one of f2, f3, d");
        if (blocks < 0) throw UsageError("fstats: blocks must not be negative");
        return make_fstats(q, {f2, f3, d, blocks});
      },
      py::arg("query"), py::arg("f2") = "", py::arg("f3") = "", py::arg("d") = "",
      py::arg("blocks") = 0, keep);
  m.def("make_sample_stats", &make_sample_stats, py::arg("query"), keep);
  m.def("scan_statistics", [] {
    py::list out;
    for (const auto& s : scan_statistics()) out.append(py::make_tuple(s.name, s.pairwise, s.help));
    return out;
  });
}

// ---- compute -----------------------------------------------------------------------------------

/// Calls the Python progress function at most every 0.1 s (and at the end), with the GIL; checks
/// for signals each time, so Ctrl-C stops a run (KeyboardInterrupt raised through compute).
class ProgressRelay {
 public:
  explicit ProgressRelay(py::object fn) : fn_(std::move(fn)) {}
  void operator()(std::int64_t done, std::int64_t total, std::int64_t variants) {
    const auto now = std::chrono::steady_clock::now();
    if (done != total && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    if (!fn_.is_none()) fn_(done, total, variants);
  }

 private:
  py::object fn_;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace

/// A column of a Table as Python: name, kind, values, labels, offsets, single precision.
static py::dict column_to_python(const Column& c) {
  using K = Column::Kind;
  py::dict d;
  d["name"] = c.name;
  const char* kinds[] = {"int", "float", "label", "int_list", "float_list"};
  d["kind"] = kinds[static_cast<int>(c.kind)];
  if (c.integral())
    d["values"] = copy_array(c.ints);
  else
    d["values"] = copy_array(c.floats);
  d["labels"] = c.kind == K::Label && c.labels ? py::cast(*c.labels) : py::none();
  d["offsets"] = c.kind == K::IntList || c.kind == K::FloatList ? py::object(copy_array(c.offsets))
                                                                : py::none();
  d["single_precision"] = c.single_precision;
  return d;
}

py::dict table_to_python(const Table& t) {
  py::dict d;
  d["note"] = t.note;
  py::list columns;
  for (const auto& c : t.columns) columns.append(column_to_python(c));
  d["columns"] = columns;
  return d;
}

namespace {

py::dict run_stats_to_python(const RunStats& s) {
  py::dict d;
  d["device"] = s.device;
  d["note"] = s.note;
  d["warnings"] = s.warnings;
  d["wall_seconds"] = s.wall_seconds;
  d["read_decode_seconds"] = s.read_decode_seconds;
  d["gather_seconds"] = s.gather_seconds;
  d["compute_seconds"] = s.compute_seconds;
  d["reduce_seconds"] = s.reduce_seconds;
  d["h2d_seconds"] = s.h2d_seconds;
  d["d2h_seconds"] = s.d2h_seconds;
  d["h2d_bytes"] = s.h2d_bytes;
  d["decoded_bytes"] = s.decoded_bytes;
  d["calls"] = s.calls;
  d["variants"] = s.variants;
  d["units"] = s.units;
  return d;
}

/// ID, REF and ALT (comma-separated, "." when none) of the rows of a per-site table.
struct SiteFields {
  std::vector<std::string> id, ref, alt;
  void add(const vcz::VariantBlock& vb, std::int64_t r) {
    id.push_back(vb.id.empty() ? "." : vb.id[static_cast<std::size_t>(r)]);
    ref.push_back(vb.allele(r, 0));
    std::string alts;
    for (int k = 1; k < vb.num_alleles(r); ++k) alts += (k > 1 ? "," : "") + vb.allele(r, k);
    alt.push_back(alts.empty() ? "." : alts);
  }
};

/// Append @p more to @p into (which may have no columns yet).
void append_rows(Table& into, Table more) {
  if (more.columns.empty()) return;
  if (into.columns.empty())
    into = std::move(more);
  else
    into.append(more);
}

/// The statistic @p made (a Python object) as a share that keeps the object alive while the
/// run holds it: the run computes it and Python reads it afterwards (e.g. PCA's eigenvalues).
std::shared_ptr<Statistic> share_of(py::object made) {
  Statistic* s = made.cast<Statistic*>();
  PyObject* ref = made.release().ptr();
  return {s, [ref](Statistic*) {
            py::gil_scoped_acquire gil;
            Py_DECREF(ref);
          }};
}

// ---- MPI ------------------------------------------------------------------------------------
// Under mpirun/srun the package's runs spread over the ranks as the CLI's do (vczstats::Runner):
// MPI starts at the first run (or mpi_rank()), every rank makes the same calls, rank 0 gets the
// results and the other ranks None (the Python layer). A failed run ends MPI for the process
// (every rank agrees on the failure at once, as the CLI's ranks do at exit); a later run raises.

#ifdef VCZSTATS_HAVE_MPI
struct PythonRanks {
  std::unique_ptr<dist::MpiRanks> ranks;
  bool ended = false;      // finish() ran: after a failed run, or at exit
  std::string why_ended;   // the failure that ended MPI (raised again by later runs)
  int rank = 0, size = 1;  // kept after MPI ended
};

PythonRanks& python_ranks() {
  static PythonRanks r;
  return r;
}

/// The ranks of this process when an MPI launcher started it (started here once), else null.
dist::Ranks* mpi_ranks() {
  PythonRanks& r = python_ranks();
  if (r.ended)
    throw UsageError("MPI ended in this process after a failed run (" + r.why_ended +
                     "): every rank stops; start the job again");
  if (!r.ranks && dist::MpiRanks::launched()) {
    int argc = 0;
    char** argv = nullptr;
    r.ranks = std::make_unique<dist::MpiRanks>(argc, argv);
    r.rank = r.ranks->rank();
    r.size = r.ranks->size();
  }
  return r.ranks.get();
}

/// After a failed run under MPI: every rank agrees on the first failure (the failing ranks meet
/// the others, who stop at their next check), MPI ends; returns the failure to raise on this rank.
std::string end_failed_run(const std::exception_ptr& e) {
  PythonRanks& r = python_ranks();
  int code = 1;
  std::string message;
  try {
    std::rethrow_exception(e);
  } catch (const dist::Stopped&) {
    code = dist::Ranks::kStopped;
  } catch (const std::exception& x) {
    message = x.what();
  } catch (...) {
    message = "unknown error";
  }
  std::string first;
  r.ranks->finish(code, message, &first);
  r.ended = true;
  r.why_ended = first.empty() ? (message.empty() ? "another rank failed" : message) : first;
  return r.why_ended;
}

/// At exit (the package's atexit): the ranks agree that every run went well and MPI ends.
void end_mpi() {
  PythonRanks& r = python_ranks();
  if (r.ranks && !r.ended) {
    std::string first;
    r.ranks->finish(0, "", &first);
    r.ended = true;
  }
  r.ranks.reset();
}
#else
dist::Ranks* mpi_ranks() {
  return nullptr;
}
#endif

/// Rows of one unit (or of a merge) under MPI, as one cell that reaches rank 0: the columns'
/// names, kinds and labels, the values (Table::save), the note and the rows' site fields
/// (@p fields, or none).
std::string pack_rows(const Table& t, const SiteFields* fields) {
  ByteWriter w;
  w.put<std::uint64_t>(t.columns.size());
  for (const Column& c : t.columns) {
    w.put_string(c.name);
    w.put(c.kind);
    w.put<std::uint8_t>(c.single_precision ? 1 : 0);
    w.put<std::uint64_t>(c.labels ? c.labels->size() : 0);
    if (c.labels)
      for (const auto& x : *c.labels) w.put_string(x);
  }
  t.save(w);
  w.put_string(t.note);
  w.put<std::uint8_t>(fields ? 1 : 0);
  if (fields)
    for (const auto* v : {&fields->id, &fields->ref, &fields->alt}) {
      w.put<std::uint64_t>(v->size());
      for (const auto& x : *v) w.put_string(x);
    }
  const auto& b = w.bytes();
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

/// pack_rows() read back: the table, and the site fields into @p fields (when packed).
Table unpack_rows(const std::string& cell, std::optional<SiteFields>& fields) {
  ByteReader r(std::as_bytes(std::span(cell.data(), cell.size())));
  Table t;
  const auto columns = r.get<std::uint64_t>();
  for (std::uint64_t i = 0; i < columns; ++i) {
    std::string name = r.get_string();
    const auto kind = r.get<Column::Kind>();
    const bool single = r.get<std::uint8_t>() != 0;
    std::shared_ptr<std::vector<std::string>> labels;
    const auto n = r.get<std::uint64_t>();
    if (n || kind == Column::Kind::Label) labels = std::make_shared<std::vector<std::string>>();
    for (std::uint64_t k = 0; k < n; ++k) labels->push_back(r.get_string());
    t.columns[static_cast<std::size_t>(t.add(std::move(name), kind, labels))].single_precision =
        single;
  }
  t.load(r);
  t.note = r.get_string();
  if (r.get<std::uint8_t>() != 0) {
    if (!fields) fields.emplace();
    for (auto* v : {&fields->id, &fields->ref, &fields->alt}) {
      const auto m = r.get<std::uint64_t>();
      for (std::uint64_t k = 0; k < m; ++k) v->push_back(r.get_string());
    }
  }
  return t;
}

/// The statistic make(query) builds, run by the library's Runner as the CLI runs it (count
/// filters fused into the statistic's pass, or a counting pass first and make called again on
/// the filtered query), the GIL released. Returns (table, run statistics, the statistic).
py::tuple compute_python(py::object query, py::function make, unsigned threads, unsigned prefetch,
                         const std::string& device, unsigned gpu_streams, py::object progress,
                         bool site_fields) {
  Query& q = query.cast<Query&>();
  RunOptions run;
  run.threads = threads;
  run.prefetch = prefetch;
  run.device = parse_device(device);
  run.gpu_streams = gpu_streams;
  ProgressRelay relay(std::move(progress));
  run.progress = [&relay](std::int64_t d, std::int64_t t, std::int64_t v) { relay(d, t, v); };

  // The statistic the run holds: the last made before the run (the Runner makes it again after
  // a counting pass); under MPI the run makes more, rank 0 loading the other ranks' states into
  // them and merging them into its own, and Python must read that one (e.g. PCA's eigenvalues).
  py::object made;
  bool running = false;
  const StatisticMaker maker = [&]() -> std::shared_ptr<Statistic> {
    py::gil_scoped_acquire gil;
    py::object m = make(query);
    if (!running) made = m;
    return share_of(std::move(m));
  };
  Table table;
  std::optional<SiteFields> fields;
  dist::Ranks* ranks = mpi_ranks();
  // One process: rows stay columns (not the CLI's text cells). Under MPI, and shared among
  // several GPUs (threads), each unit's rows reach rank 0 as one packed cell, in output order.
  const bool spread = ranks || run.device.several();
  RowStream rows;
  rows.needs.alleles = rows.needs.ids = site_fields;
  rows.unit_rows = [&](const UnitData& u, Statistic& s,
                       const std::function<void(const Cells&)>& row) {
    Table t = s.take_rows();
    const int variant = t.find("variant");
    std::optional<SiteFields> own;
    std::optional<SiteFields>& into = spread ? own : fields;
    if (site_fields && variant >= 0) {
      if (!into) into.emplace();
      for (const auto v : t.columns[static_cast<std::size_t>(variant)].ints)
        into->add(*u.variants, v - u.unit->begin);
    }
    if (!spread)
      append_rows(table, std::move(t));
    else if (t.rows() > 0)
      row({pack_rows(t, own ? &*own : nullptr)});
  };
  if (spread) {
    rows.write = [&](const Cells& cells) { append_rows(table, unpack_rows(cells.at(0), fields)); };
    rows.after_merge = [&](Statistic& s) { append_rows(table, s.take_rows()); };
  }
  RunStats rs;
  bool writes = true;
  std::exception_ptr failed;
  {
    py::gil_scoped_release release;
    try {
      Runner runner(q, maker, run, RunnerRanks{ranks, device.find(':') != std::string::npos});
      running = true;
      const RunnerResult result = runner.run(rows);
      rs = result.stats;
      writes = result.writes;
      if (writes) {
        append_rows(table, runner.statistic().take_rows());
        append_rows(table, runner.statistic().finish());
      }
    } catch (...) {
      if (!ranks) throw;
      failed = std::current_exception();
    }
  }
#ifdef VCZSTATS_HAVE_MPI
  if (failed) {
    // Every rank ends MPI and raises: the failing ranks their error, the others this one.
    std::string why;
    {
      py::gil_scoped_release release;
      why = end_failed_run(failed);
    }
    try {
      std::rethrow_exception(failed);
    } catch (const dist::Stopped&) {
      throw Error("stopped under MPI: " + why);
    }
  }
#else
  (void)failed;
#endif
  if (!writes) return py::make_tuple(py::none(), run_stats_to_python(rs), py::none());
  py::dict d = table_to_python(table);
  if (fields && static_cast<std::int64_t>(fields->id.size()) == table.rows()) {
    d["id"] = fields->id;
    d["ref"] = fields->ref;
    d["alt"] = fields->alt;
  }
  return py::make_tuple(d, run_stats_to_python(rs), made);
}

void bind_compute(py::module_& m) {
  m.def("compute", &compute_python, py::arg("query"), py::arg("make"), py::arg("threads") = 0,
        py::arg("prefetch") = 0, py::arg("device") = "auto", py::arg("gpu_streams") = 0,
        py::arg("progress") = py::none(), py::arg("site_fields") = false,
        "Run the statistic make(query) builds over the query as the CLI runs it "
        "(vczstats::Runner: the query's count filters applied in the statistic's own pass "
        "when it needs only per-site counts, else by a counting pass first, after which make "
        "is called again), the GIL released; returns (table, run statistics, statistic). "
        "progress(done, total, variants) is called at most every 0.1 s.");
  m.def("gpu_count", [] {
    std::string reason;
    const int n = gpu_count(&reason);
    return py::make_tuple(n, reason);
  });
  m.def("hardware_threads", &hardware_threads);
  m.def(
      "mpi_ranks",
      [] {
#ifdef VCZSTATS_HAVE_MPI
        if (!python_ranks().ended) mpi_ranks();
        return py::make_tuple(python_ranks().rank, python_ranks().size);
#else
        return py::make_tuple(0, 1);
#endif
      },
      "(rank, size) of this process under an MPI launcher (MPI starts here once), else (0, 1).");
#ifdef VCZSTATS_HAVE_MPI
  m.def("_end_mpi", [] {
    py::gil_scoped_release release;
    end_mpi();
  });
  m.def("_mpi_fail", [](const std::string& message) {
    // A failure outside a run (e.g. opening the store) on this rank: the others are in a run,
    // or will be: they stop there, and MPI ends for every rank, as after a failed run.
    if (python_ranks().ended || !dist::MpiRanks::launched()) return;
    py::gil_scoped_release release;
    mpi_ranks();
    end_failed_run(std::make_exception_ptr(Error(message)));
  });
#else
  m.def("_end_mpi", [] {});
  m.def("_mpi_fail", [](const std::string&) {});
#endif
  m.def("parse_device", [](const std::string& d) { return parse_device(d).to_string(); });
}

}  // namespace

void bind_all(py::module_& m) {
  m.doc() = "vczstats: population-genetics statistics from VCF Zarr stores (C++ core).";
  m.attr("__version__") = VCZSTATS_VERSION;
  register_errors(m);
  bind_store(m);
  bind_query(m);
  bind_statistics(m);
  bind_compute(m);
  bind_blocks(m);
  bind_families(m);
}

}  // namespace vczstats::python

PYBIND11_MODULE(_core, m) {
  vczstats::python::bind_all(m);
}
