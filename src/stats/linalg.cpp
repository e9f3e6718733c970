// OpenBLAS behind stats/linalg.hpp: CBLAS for the products, LAPACK's Fortran routines (which
// OpenBLAS carries) for eigenvectors, SVD and QR. LAPACK is column-major: a row-major matrix is
// its transpose there, which the wrappers use instead of copying.
//
// The library is opened here, at its first use, not linked: OpenBLAS starts one thread per core
// when it is loaded, and on a 64-core host under `ulimit -v` (HPC job limits) that alone aborts
// the process, in runs that never multiply a matrix. Opened on demand, it starts with one thread
// (OPENBLAS_NUM_THREADS while it loads) and grows to the run's -t in set_threads().

#include "stats/linalg.hpp"

#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>
#include <type_traits>

#include "vczstats/error.hpp"

#ifndef VCZ_OPENBLAS_LIBRARY
#define VCZ_OPENBLAS_LIBRARY "libopenblas.so.0"
#endif

namespace vczstats::stats::linalg {
namespace {

using Dsyevr = void(const char*, const char*, const char*, const int*, double*, const int*,
                    const double*, const double*, const int*, const int*, const double*, int*,
                    double*, double*, const int*, int*, double*, const int*, int*, const int*,
                    int*);
using Dgesvd = void(const char*, const char*, const int*, const int*, double*, const int*, double*,
                    double*, const int*, double*, const int*, double*, const int*, int*);
using Dgeqrf = void(const int*, const int*, double*, const int*, double*, double*, const int*,
                    int*);
using Dorgqr = void(const int*, const int*, const int*, double*, const int*, const double*, double*,
                    const int*, int*);
using Dgemm = void(CBLAS_ORDER, CBLAS_TRANSPOSE, CBLAS_TRANSPOSE, blasint, blasint, blasint, double,
                   const double*, blasint, const double*, blasint, double, double*, blasint);
using SetThreads = void(int);

/// The entry points of the opened library.
struct Blas {
  SetThreads* set_threads = nullptr;
  Dgemm* dgemm = nullptr;
  Dsyevr* dsyevr = nullptr;
  Dgesvd* dgesvd = nullptr;
  Dgeqrf* dgeqrf = nullptr;
  Dorgqr* dorgqr = nullptr;
};

std::atomic<int> g_threads{1};  // what set_threads() asked for, applied when the library opens

const Blas& blas() {
  static Blas b;
  static std::once_flag once;
  std::call_once(once, [] {
    // Read by OpenBLAS's constructor during dlopen: one thread to start with, whatever the
    // environment says (set_threads() then gives it the run's threads); restored after.
    const char* before = std::getenv("OPENBLAS_NUM_THREADS");
    const std::string saved = before ? before : "";
    ::setenv("OPENBLAS_NUM_THREADS", "1", 1);
    void* h = nullptr;
    std::string why;
    for (const char* name : {VCZ_OPENBLAS_LIBRARY, "libopenblas.so.0", "libopenblas.so"}) {
      if ((h = ::dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
      if (const char* e = ::dlerror(); e && why.empty()) why = e;
    }
    if (before)
      ::setenv("OPENBLAS_NUM_THREADS", saved.c_str(), 1);
    else
      ::unsetenv("OPENBLAS_NUM_THREADS");
    if (!h) throw Error("cannot load OpenBLAS for the matrix statistics: " + why);
    auto sym = [&](auto*& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(h, name));
      if (!fn) throw Error(std::string("OpenBLAS lacks ") + name);
    };
    sym(b.set_threads, "openblas_set_num_threads");
    sym(b.dgemm, "cblas_dgemm");
    sym(b.dsyevr, "dsyevr_");
    sym(b.dgesvd, "dgesvd_");
    sym(b.dgeqrf, "dgeqrf_");
    sym(b.dorgqr, "dorgqr_");
    b.set_threads(g_threads.load());
  });
  return b;
}

int to_int(std::int64_t v, const char* what) {
  if (v > std::numeric_limits<int>::max())
    throw UsageError(std::string(what) + ": too large for LAPACK's 32-bit indices");
  return static_cast<int>(v);
}

blasint bl(std::int64_t v) {
  return static_cast<blasint>(v);
}

}  // namespace

void set_threads(int threads) {
  g_threads.store(std::max(1, threads));
  blas().set_threads(std::max(1, threads));
}

void add_abt(std::int64_t m, std::int64_t n, std::int64_t k, const double* a, std::int64_t lda,
             const double* b, std::int64_t ldb, double* c, std::int64_t ldc) {
  if (m == 0 || n == 0 || k == 0) return;
  blas().dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, bl(m), bl(n), bl(k), 1.0, a, bl(lda), b,
               bl(ldb), 1.0, c, bl(ldc));
}

void atb(std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* a,
         std::int64_t lda, const double* b, std::int64_t ldb, double beta, double* c,
         std::int64_t ldc) {
  if (m == 0 || n == 0) return;
  blas().dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, bl(m), bl(n), bl(k), alpha, a, bl(lda), b,
               bl(ldb), beta, c, bl(ldc));
}

void ab(std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* a,
        std::int64_t lda, const double* b, std::int64_t ldb, double beta, double* c,
        std::int64_t ldc) {
  if (m == 0 || n == 0) return;
  blas().dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, bl(m), bl(n), bl(k), alpha, a, bl(lda), b,
               bl(ldb), beta, c, bl(ldc));
}

void top_eigen(std::int64_t n64, std::int64_t k64, std::vector<double>& lower,
               std::vector<double>& values, std::vector<double>& vectors) {
  if (n64 > 46340)
    throw UsageError(
        "exact PCA of more than 46,340 samples needs 64-bit LAPACK indices; use "
        "the randomized method (--approx)");
  const int n = to_int(n64, "eigenvectors"), k = to_int(k64, "eigenvectors");
  values.assign(static_cast<std::size_t>(k), 0);
  vectors.assign(static_cast<std::size_t>(n64 * k64), 0);
  if (n == 0 || k == 0) return;
  // Row-major lower triangle = column-major upper triangle.
  const char jobz = 'V', range = 'I', uplo = 'U';
  const int il = n - k + 1, iu = n;
  const double vl = 0, vu = 0, abstol = 0;
  int m = 0, info = 0;
  std::vector<double> w(static_cast<std::size_t>(n)), z(static_cast<std::size_t>(n64 * k64));
  std::vector<int> isuppz(static_cast<std::size_t>(2 * k));
  double work_query = 0;
  int iwork_query = 0, lwork = -1, liwork = -1;
  blas().dsyevr(&jobz, &range, &uplo, &n, lower.data(), &n, &vl, &vu, &il, &iu, &abstol, &m,
                w.data(), z.data(), &n, isuppz.data(), &work_query, &lwork, &iwork_query, &liwork,
                &info);
  if (info != 0) throw Error("LAPACK dsyevr workspace query failed: info " + std::to_string(info));
  lwork = static_cast<int>(work_query);
  liwork = iwork_query;
  std::vector<double> work(static_cast<std::size_t>(lwork));
  std::vector<int> iwork(static_cast<std::size_t>(liwork));
  blas().dsyevr(&jobz, &range, &uplo, &n, lower.data(), &n, &vl, &vu, &il, &iu, &abstol, &m,
                w.data(), z.data(), &n, isuppz.data(), work.data(), &lwork, iwork.data(), &liwork,
                &info);
  if (info != 0 || m != k)
    throw Error("LAPACK dsyevr failed to find the eigenvectors: info " + std::to_string(info));
  // Ascending, column-major -> descending, sample-major.
  for (int c = 0; c < k; ++c) {
    values[static_cast<std::size_t>(c)] = w[static_cast<std::size_t>(k - 1 - c)];
    for (std::int64_t i = 0; i < n64; ++i)
      vectors[static_cast<std::size_t>(i * k64 + c)] =
          z[static_cast<std::size_t>((k - 1 - c) * n64 + i)];
  }
}

void thin_svd(std::int64_t m64, std::int64_t n64, std::vector<double>& a, std::vector<double>& s,
              std::vector<double>& u) {
  // Row-major A (m x n) is column-major A^T (n x m) = U' S V'^T; A's left singular vectors are
  // V', and V'^T (n x m, column-major) is A's U in row-major order.
  const int rows = to_int(n64, "SVD"), cols = to_int(m64, "SVD");
  const int k = std::min(rows, cols);
  s.assign(static_cast<std::size_t>(k), 0);
  u.assign(static_cast<std::size_t>(m64 * k), 0);
  if (k == 0) return;
  const char jobu = 'N', jobvt = 'S';
  const int ldu = 1, ldvt = k;
  double dummy = 0, work_query = 0;
  int lwork = -1, info = 0;
  blas().dgesvd(&jobu, &jobvt, &rows, &cols, a.data(), &rows, s.data(), &dummy, &ldu, u.data(),
                &ldvt, &work_query, &lwork, &info);
  if (info != 0) throw Error("LAPACK dgesvd workspace query failed: info " + std::to_string(info));
  lwork = static_cast<int>(work_query);
  std::vector<double> work(static_cast<std::size_t>(lwork));
  blas().dgesvd(&jobu, &jobvt, &rows, &cols, a.data(), &rows, s.data(), &dummy, &ldu, u.data(),
                &ldvt, work.data(), &lwork, &info);
  if (info != 0) throw Error("LAPACK dgesvd failed: info " + std::to_string(info));
}

void orthonormalize(std::int64_t m64, std::int64_t n64, std::vector<double>& a) {
  const int m = to_int(m64, "QR"), n = to_int(n64, "QR");
  if (m == 0 || n == 0) return;
  std::vector<double> col(static_cast<std::size_t>(m64 * n64));  // column-major copy
  for (std::int64_t i = 0; i < m64; ++i)
    for (std::int64_t j = 0; j < n64; ++j)
      col[static_cast<std::size_t>(j * m64 + i)] = a[static_cast<std::size_t>(i * n64 + j)];
  std::vector<double> tau(static_cast<std::size_t>(n));
  double work_query = 0;
  int lwork = -1, info = 0;
  blas().dgeqrf(&m, &n, col.data(), &m, tau.data(), &work_query, &lwork, &info);
  lwork = std::max(static_cast<int>(work_query), n);
  std::vector<double> work(static_cast<std::size_t>(lwork));
  blas().dgeqrf(&m, &n, col.data(), &m, tau.data(), work.data(), &lwork, &info);
  if (info != 0) throw Error("LAPACK dgeqrf failed: info " + std::to_string(info));
  lwork = -1;
  blas().dorgqr(&m, &n, &n, col.data(), &m, tau.data(), &work_query, &lwork, &info);
  lwork = std::max(static_cast<int>(work_query), n);
  work.resize(static_cast<std::size_t>(lwork));
  blas().dorgqr(&m, &n, &n, col.data(), &m, tau.data(), work.data(), &lwork, &info);
  if (info != 0) throw Error("LAPACK dorgqr failed: info " + std::to_string(info));
  for (std::int64_t i = 0; i < m64; ++i)
    for (std::int64_t j = 0; j < n64; ++j)
      a[static_cast<std::size_t>(i * n64 + j)] = col[static_cast<std::size_t>(j * m64 + i)];
}

}  // namespace vczstats::stats::linalg
