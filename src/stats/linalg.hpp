#pragma once
// The dense linear algebra of the matrix family, from OpenBLAS (BLAS and LAPACK; Debian's
// libopenblas-dev): products of double matrices, the top eigenpairs of a symmetric matrix and
// the thin QR and SVD of the randomized PCA. Only linalg.cpp sees the BLAS/LAPACK headers.

#include <cstdint>
#include <vector>

namespace vczstats::stats::linalg {

/// Threads OpenBLAS uses inside one call (1 inside our own worker threads).
void set_threads(int threads);

/// C (m x n, row-major, ldc) += A (m x k, row-major, lda) * B^T (B: n x k, row-major, ldb).
void add_abt(std::int64_t m, std::int64_t n, std::int64_t k, const double* a, std::int64_t lda,
             const double* b, std::int64_t ldb, double* c, std::int64_t ldc);

/// C (m x n, row-major) = alpha A^T B + beta C with A (k x m) and B (k x n) row-major.
void atb(std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* a,
         std::int64_t lda, const double* b, std::int64_t ldb, double beta, double* c,
         std::int64_t ldc);

/// C (m x n, row-major) = alpha A B + beta C with A (m x k) and B (k x n) row-major.
void ab(std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const double* a,
        std::int64_t lda, const double* b, std::int64_t ldb, double beta, double* c,
        std::int64_t ldc);

/// The @p k largest eigenvalues (descending) and their unit eigenvectors of the symmetric
/// n x n matrix whose lower triangle is @p lower (row-major; destroyed). Vectors: n x k,
/// row-major (sample-major). @throws Error when LAPACK fails.
void top_eigen(std::int64_t n, std::int64_t k, std::vector<double>& lower,
               std::vector<double>& values, std::vector<double>& vectors);

/// Thin SVD of the m x n row-major matrix @p a (destroyed): the min(m, n) singular values
/// (descending) and the left singular vectors (m x min(m, n), row-major). @throws Error on
/// failure.
void thin_svd(std::int64_t m, std::int64_t n, std::vector<double>& a, std::vector<double>& s,
              std::vector<double>& u);

/// Thin QR of the m x n (m >= n) row-major matrix @p a: replaced by Q (m x n, orthonormal
/// columns). @throws Error on failure.
void orthonormalize(std::int64_t m, std::int64_t n, std::vector<double>& a);

}  // namespace vczstats::stats::linalg
