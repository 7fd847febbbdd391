"""Reading TTS files into records: what a record is and where it starts."""
from pathlib import Path

from ingest.load.cases import choose_tts_files
from ingest.load.tts_files import case_id_for, read_bsv, read_csv, read_json, read_jsonl, read_text


def test_bsv_records_are_non_blank_lines_numbered_physically():
    parsed = read_bsv("fever | -72\n\n  \nmale | 0\\\nEvent | Time\nprose without delimiter\n")
    assert [(r.line_number, r.event_text, r.time_text, r.n_fields) for r in parsed.records] == [
        (1, "fever", "-72", 2),
        (4, "male", "0", 2),  # trailing backslash stripped before parsing
        (5, "Event", "Time", 2),  # a header-like line inside a .bsv is a record
        (6, "prose without delimiter", None, 1),
    ]
    assert parsed.records[1].record_text == "male | 0\\"  # raw text kept verbatim


def test_bsv_strips_latex_row_ends():
    parsed = read_bsv("sepsis | 24 \\\\\nshock | 36 \\\\ \\hline\n")
    assert [(r.event_text, r.time_text) for r in parsed.records] == [("sepsis", "24"), ("shock", "36")]


def test_csv_header_is_not_a_record_and_quoted_newlines_keep_the_start_line():
    text = '\ufeffevent,time\n\n"fever, high",-72\n"multi\nline event",0\nno time\n'
    parsed = read_csv(text)
    assert parsed.structure_error is None
    assert [(r.line_number, r.event_text, r.time_text, r.n_fields) for r in parsed.records] == [
        (3, "fever, high", "-72", 2),
        (4, "multi\nline event", "0", 2),
        (6, "no time", None, 1),
    ]


def test_csv_without_event_time_header_is_a_structure_error_with_every_row_kept():
    parsed = read_csv("a,b\nfever,1\n")
    assert parsed.structure_error
    assert len(parsed.records) == 2


def test_json_elements_carry_the_line_they_start_on():
    text = '[\n  {"event": "fever", "time": -72},\n\n  {"event": "admitted",\n   "time": "0"},\n  "oops"\n]\n'
    parsed = read_json(text)
    assert parsed.structure_error is None
    assert [(r.line_number, r.event_text, r.time_text) for r in parsed.records] == [
        (2, "fever", "-72"), (4, "admitted", "0"), (6, None, None)]


def test_unreadable_json_keeps_its_lines_as_records():
    parsed = read_json('[{"event": "x", "time": 1},\n{"event": \n')
    assert parsed.structure_error and len(parsed.records) == 2


def test_jsonl_invalid_line_is_a_record_with_no_fields():
    parsed = read_jsonl('{"event": "x", "time": 1.5}\n\n{broken\n')
    assert [(r.line_number, r.time_text, r.n_fields) for r in parsed.records] == [(1, "1.5", 2), (3, None, 0)]


def test_latin1_fallback(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes("fièvre".encode("latin-1"))
    assert read_text(path) == ("fièvre", "latin-1")


def test_case_id_drops_trailing_body():
    assert case_id_for(Path("PMC123_body.bsv")) == "PMC123"
    assert case_id_for(Path("case_body_x.csv")) == "case_body_x"


def test_one_file_per_case_by_format_priority(tmp_path):
    for name in ["a_body.bsv", "a_body.csv", "b.json", "b.csv", "c.csv", "notes.md"]:
        (tmp_path / name).write_text("x")
    chosen, skipped = choose_tts_files(tmp_path)
    assert {k: v.name for k, v in chosen.items()} == {"a": "a_body.bsv", "b": "b.json", "c": "c.csv"}
    assert sorted(p.name for p, _ in skipped) == ["a_body.csv", "b.csv", "notes.md"]
