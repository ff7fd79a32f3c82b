# The pair-selection step shared by the SMO kernels over a simplex or a block of one (simplex_qp, group_simplex,
# nslack_qp; cimported, compiled into each kernel that uses it).

cdef inline double violating_pair(const double* g, const double* alpha, Py_ssize_t lo, Py_ssize_t hi,
                                  double* gu, Py_ssize_t* up, double* gd, Py_ssize_t* down) noexcept nogil:
    # The maximal violating pair among the variables lo..hi-1: ``up`` takes the largest gradient, ``down`` the
    # smallest among those with mass (alpha > 0); the first index wins a tie.  ``gu, up, gd, down`` come in with
    # the caller's starting values (a block's slack variable, or -inf/+inf and -1) and are updated in place.
    # Returns sum_i g_i alpha_i over the range, summed in index order (the Frank-Wolfe gap's second term).
    cdef double ga = 0.0
    cdef Py_ssize_t i
    for i in range(lo, hi):
        ga = ga + g[i] * alpha[i]
        if g[i] > gu[0]:
            gu[0] = g[i]
            up[0] = i
        if alpha[i] > 0.0 and g[i] < gd[0]:
            gd[0] = g[i]
            down[0] = i
    return ga
