"""Benchmark prompt suites: vistar's own Core and Hard sets (versioned `.vistar` files shipped in this
package), their corpus statistics and safety screen, and the sibling benchmarks' suites when available."""
from .catalog import SuiteError, SuiteInfo, builtin_suite, builtin_suites, load_builtin
from .loader import LoadedSuite, list_suites, load_suite

__all__ = ["SuiteError", "SuiteInfo", "LoadedSuite", "builtin_suite", "builtin_suites", "load_builtin",
           "list_suites", "load_suite"]
