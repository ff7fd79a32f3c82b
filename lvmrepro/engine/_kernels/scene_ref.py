"""Plain NumPy reference for :mod:`lvmrepro.engine._kernels.scene` (same arguments, same outputs).

Loops over images, classes and regions, mirroring ``S[i, y] = sum_r max_p (A[i,r,p] + B[y,p])``;
the tests compare the Cython kernel against it.
"""
from __future__ import annotations

import numpy as np


def class_scores(A, B, S):
    n, R, _ = A.shape
    for i in range(n):
        for y in range(B.shape[0]):
            total = 0.0
            for r in range(R):
                total += float(np.max(A[i, r] + B[y]))
            S[i, y] = total


def latent_completion(A, B, Y, Z, best):
    n, R, _ = A.shape
    for i in range(n):
        total = 0.0
        for r in range(R):
            v = A[i, r] + B[Y[i]]
            Z[i, r] = int(np.argmax(v))
            total += float(v[Z[i, r]])
        best[i] = total


def part_feature_sum(X, Z, c, out):
    n, R, _ = X.shape
    for i in range(n):
        if c[i] == 0.0:
            continue
        for r in range(R):
            out[Z[i, r]] += c[i] * X[i, r]
