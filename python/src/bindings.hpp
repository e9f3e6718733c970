#pragma once
// Shared pieces of the vczstats._core extension module (module.cpp binds stores, queries,
// statistics and compute; blocks.cpp the genotype blocks and their DLPack / CUDA array
// interface).

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <vector>

#include "vczstats/table.hpp"

namespace vczstats::python {

namespace py = pybind11;

/// @brief A numpy array over @p data that keeps @p owner alive (no copy). @p data may be null
/// for an empty array.
py::array array_over(const py::dtype& dtype, std::vector<py::ssize_t> shape, const void* data,
                     std::shared_ptr<void> owner);

/// @brief A numpy array holding a copy of @p v.
template <class T>
py::array_t<T> copy_array(const std::vector<T>& v) {
  py::array_t<T> a(static_cast<py::ssize_t>(v.size()));
  if (!v.empty()) std::copy(v.begin(), v.end(), a.mutable_data());
  return a;
}

/// @brief The numpy dtype of signed integers of @p bytes bytes.
py::dtype int_dtype(int bytes);

/// @brief Bind everything (the module's entry point).
void bind_all(py::module_& m);

/// @brief A Table as Python: {"note": ..., "columns": [{name, kind, values, labels, offsets,
/// single_precision}, ...]} (module.cpp).
py::dict table_to_python(const Table& t);

/// @brief Bind the ld, matrix and haplotype families' factories (families.cpp).
void bind_families(py::module_& m);

/// @brief Bind GenotypeBlockStream, materialize and DeviceArray.
void bind_blocks(py::module_& m);

}  // namespace vczstats::python
