"""Numeric kernels: numpy references and their accelerated (Triton / numba) equivalents."""
