from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The seeded export generator is a benchmark tool, not part of the package: tests import it from there.
sys.path.append(str(ROOT / "benchmarks"))
FIXTURES = ROOT / "fixtures"
REAL_EXPORTS = ROOT.parent / "shared" / "real-exports"
# The second collection of public export files (a real sharded 2026 ChatGPT export among them), read in place.
COLLECTED = ROOT.parent / "shared" / "real-exports-collected"


def fresh(*args: str) -> subprocess.CompletedProcess[str]:
    """``memvelope ARGS`` in a new interpreter (a single thread when the command starts)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "memvelope_tools", *args], capture_output=True, text=True, env=env, timeout=120
    )


@pytest.fixture
def write_parts(tmp_path: Path):
    """Write each value (JSON-dumped, or raw bytes/str as given) to its own input file; return paths."""

    def _write(*values: object, names: list[str] | None = None) -> list[Path]:
        paths = []
        for i, value in enumerate(values):
            path = tmp_path / (names[i] if names else f"part-{i:03d}.json")
            if isinstance(value, bytes):
                path.write_bytes(value)
            elif isinstance(value, str):
                path.write_bytes(value.encode("utf-8", "surrogatepass"))
            else:
                path.write_text(json.dumps(value), encoding="utf-8")
            paths.append(path)
        return paths

    return _write


@pytest.fixture
def edited_in_place(tmp_path: Path) -> Path:
    """A history folder of two exports holding the same message (id, role, time, place), its text changed
    between them from "tell me about ferrets" to "tell me about otters"."""
    from memvelope_tools import add_to_history

    def export(text: str) -> dict[str, object]:
        message = {"id": "m1", "role": "user", "ts": "2025-01-01T10:00:00Z", "text": text}
        conv = {"id": "c", "title": "Pets", "created_at": None, "updated_at": None, "messages": [message]}
        meta = {"source_provider": "claude", "conversation_count": 1, "message_count": 1}
        return {"memvelope": "envelope-v0", "meta": meta, "conversations": [conv]}

    folder = tmp_path / "edited-in-place"
    add_to_history(export("tell me about ferrets"), folder, date="2025-01-02")
    add_to_history(export("tell me about otters"), folder, date="2025-02-02")
    return folder


@contextlib.contextmanager
def engine_running(name: str, work: str = "scan") -> Iterator[None]:
    """Run the block with the engine ``name``, then assert that ``work`` ran there and never with the other.

    With ``name="c"`` where the compiled helpers are not built, the test is skipped (``make test``,
    which sets MEMVELOPE_REQUIRE_NATIVE, fails instead).
    """
    from memvelope_tools import _engine

    if name == "c" and not _built(work):
        if os.environ.get("MEMVELOPE_REQUIRE_NATIVE"):
            pytest.fail("the C helpers were not built (pip install printed why)")
        pytest.skip("the C helpers are not built here (no C compiler at install)")
    other = "python" if name == "c" else "c"
    before = _engine.ran()
    with _engine.engine(name):  # type: ignore[arg-type]
        yield
    after = _engine.ran()
    assert after.get((work, name), 0) > before.get((work, name), 0), f"{work} never ran with the {name} engine"
    assert after.get((work, other), 0) == before.get((work, other), 0), f"{work} ran with the {other} engine"


def _built(work: str) -> bool:
    if work == "scan":
        from memvelope_tools._json import elements

        return elements._native is not None
    from memvelope_tools._frames import text

    return text._textscan is not None


ENGINES = ("c", "python")


# Slow tests in modules whose own files other work keeps busy, marked here by node id prefix (the
# others carry @pytest.mark.slow in place): each takes a second or more on 2 shared cores.
_SLOW_ELSEWHERE = (
    "tests/test_notebooks.py::",
    "tests/test_readme.py::test_block",
    "tests/test_report.py::",
    "tests/test_startup.py::",
    "tests/test_cli_load.py::test_dedupe_on_parquet_and_report",
    "tests/test_cli_load.py::test_report_and_distill_on_an_unzipped_part",
    "tests/test_cli_load.py::test_a_missing_dependency_is_one_line",
    "tests/test_cli_load.py::test_parquet_needs_no_pandas",
    "tests/test_cli_load.py::test_provider_column_read_by_duckdb",
    "tests/test_hostile.py::test_single_500_mb_string_converts",
    "tests/test_hostile.py::test_ctrl_c_during_a_large_conversion",
    "tests/test_hostile.py::test_zip_bomb_passes_when_the_limit_is_raised",
    "tests/test_hostile.py::test_existing_output_survives_failed_write",
    "tests/test_hostile.py::test_zip_bomb_ratio",
    "tests/test_hostile.py::test_nested_100000_levels",
    "tests/test_hostile.py::test_conversion_and_reading_use_no_network_and_run_nothing",
    "tests/test_hostile.py::test_output_to_dev_full",
    "tests/test_hostile.py::test_zip_member_lying_about_its_size",
    "tests/test_hostile.py::test_only_the_llm_distiller_imports_network_modules",
    "tests/test_plot.py::test_importing_the_package_does_not_import_matplotlib",
    "tests/test_plot.py::test_heatmap_shifts_cells_to_the_timezone_given",
    "tests/test_plot.py::test_lengths_even_stays_linear_and_messages_frame_gives_the_same_bars",
    "tests/test_plot.py::test_helpers_leave_global_state_alone",
    "tests/test_doctor.py::test_claude_normalise_keeps_exactly_what_classify_keeps",
    "tests/test_doctor.py::test_chatgpt_normalise_keeps_exactly_what_classify_keeps",
    "tests/test_topics.py::test_the_report_has_a_topics_section",
    "tests/test_topics.py::test_the_report_says_when_the_history_is_too_small_for_topics",
    "tests/test_topics.py::test_every_kind_of_source_gives_the_same_topics",
    "tests/test_topics.py::test_the_same_input_and_seed_give_the_same_topics",
    "tests/test_topics.py::test_more_topics_than_the_data_allows_are_lowered_with_a_warning",
    "tests/test_imports.py::test_no_module_uses_another_modules_private_names",
    "tests/test_imports.py::test_no_module_takes_a_name_a_package_loads_lazily",
    "tests/test_diff_cli.py::",
    "tests/test_history_index.py::test_an_add_keeps_the_indexed_messages_and_indexes_only_the_new_ones",
    "tests/test_chart_details.py::test_quarterly_topic_shares_tick_january_april_july_october",
    "tests/test_plot_scripts.py::test_topic_terms_of_a_mixed_script_history_warns_nothing",
    "tests/test_imports.py::test_no_import_cycle_in_the_package",
    "tests/test_imports.py::test_the_graph_is_built_from_every_module",
    "tests/test_errors.py::test_the_table_names_the_classes_that_raise_each_reason",
    "tests/test_errors.py::test_every_reason_is_a_string_literal",
    "tests/test_errors.py::test_every_raised_reason_is_in_the_literal_type",
    "tests/test_errors.py::test_the_literal_type_holds_only_raised_reasons",
    "tests/test_errors.py::test_the_walk_finds_the_raise_sites",
    "tests/test_cli_doctor.py::test_help_has_an_example",
    "tests/test_cli_convert.py::test_python_dash_m_entry_point",
    "tests/test_search.py::test_mv_search_stays_the_function_after_its_module_is_imported",
    "tests/test_search.py::test_equal_scores_are_ordered_by_time_then_history_order_whatever_segment_holds_them",
    "tests/test_search.py::test_every_kind_of_source_gives_the_same_hits",
    "tests/test_canonical.py::test_matches_node_json_stringify",
    "tests/test_cli_search.py::test_topics_prints_one_line_per_topic",
    "tests/test_cli_search.py::test_topics_json_and_a_note_when_lowered",
    "tests/test_chart_details.py::test_report_calls_an_export_an_export",
    "tests/test_chart_details.py::test_report_command_calls_an_export_an_export",
    "tests/test_chart_details.py::test_topics_of_one_conversation_says_one_topic",
    "tests/test_chart_details.py::test_report_with_no_facts_warns_nothing",
    "tests/test_topics.py::test_the_report_finds_topics_wherever_topics_does",
    "tests/test_wrong_inputs.py::test_two_files_with_one_name_get_their_paths_as_labels_everywhere",
    "tests/test_history.py::test_history_of_the_same_export_twice_is_its_history",
    "tests/test_history.py::test_an_export_that_only_adds_gives_only_new_grown_unchanged",
    "tests/test_history.py::test_diff_of_an_export_with_itself_is_all_unchanged",
    "tests/test_history_views.py::test_cli_report_takes_a_history_folder",
    "tests/test_history_views.py::test_report_of_a_history_folder_has_the_history_section",
    "tests/test_history_views.py::test_report_of_documents_has_no_history_section",
    "tests/test_memory.py::test_cli_report_has_the_memory_section",
    "tests/test_memory.py::test_report_section_escapes_and_cautions",
    "tests/test_imports.py::test_package_init_edges_are_seen",
    "tests/test_imports.py::test_no_import_inside_a_function_dodges_a_cycle",
    "tests/test_imports.py::test_the_levels_from_the_bottom_to_the_command_line_are_bounded",
    "tests/test_imports.py::test_at_most_eight_levels",
    "tests/test_plot_scripts.py::test_report_command_says_a_missing_font_once_as_a_note",
    "tests/test_public_api.py::test_each_public_module_imports_on_its_own",
    "tests/test_full_disk.py::test_stdout_on_a_full_disk_is_one_error_line",
    "tests/test_report_png.py::",
    "tests/test_native_warning.py::",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith(_SLOW_ELSEWHERE):
            item.add_marker(pytest.mark.slow)
