# The sub-steps of a partitioned sweep (_substeps.h), for the kernels'
# modules to cimport: the driver and what its threads share.
from libc.stdint cimport int32_t, int64_t

cdef extern from "_substeps.h":
    ctypedef struct clda_barrier:
        int64_t n_threads
        int64_t arrived
        int64_t generation
        const int32_t* stop
    ctypedef struct clda_substeps:
        Py_ssize_t P
        Py_ssize_t n_threads
        Py_ssize_t K
        Py_ssize_t nk_stride
        int32_t* nk
        int32_t* nk_cell
        clda_barrier barrier
        int32_t* stop
        int32_t aborted
        double* busy
        int64_t* counters
    ctypedef void (*clda_cell_fn)(void* arg, Py_ssize_t p, Py_ssize_t q,
                                  int32_t* nk) noexcept nogil
    int CLDA_BUSY_STRIDE
    void clda_substeps_init(clda_substeps* c, Py_ssize_t P, Py_ssize_t n_threads,
                            Py_ssize_t K, int32_t* nk, int32_t* nk_cell,
                            Py_ssize_t nk_stride, int32_t* stop, double* busy,
                            int64_t* counters) noexcept nogil
    void clda_substeps_ready(clda_substeps* c) noexcept nogil
    int clda_substeps_run(clda_substeps* c, Py_ssize_t t, clda_cell_fn cell,
                          void* arg) noexcept nogil
