"""Role-weighted reports over a run's scores: `build_report(run_dir)` writes HTML, Markdown, CSV and DuckDB."""
from .build import build_report
from .tables import ReportData, build_report_data

__all__ = ["ReportData", "build_report", "build_report_data"]
