"""`hindsight load cases`: what reaches raw, idempotency, rejection, resume."""
from conftest import DEMO, query, scalar

SEPSIS = DEMO / "sepsis"


def load_demo_sepsis(cli):
    return cli("load", "cases", "--cohort", "sepsis", "--narratives", SEPSIS / "narratives",
               "--tts", f"H={SEPSIS / 'tts_h'}", "--tts", f"L={SEPSIS / 'tts_l'}")


def test_loads_every_record_of_the_chosen_files(cli, warehouse):
    result = load_demo_sepsis(cli)
    assert "4 narratives, 8 TTS files" in result.output
    expected = sum(  # every line but the header
        sum(1 for line in path.read_text().splitlines()[1:] if line.strip()) for path in (SEPSIS / "tts_h").glob("*.csv")
    )
    assert scalar(warehouse, "select count(*) from raw.tts_records where source = 'H'") == expected
    # the .csv beside the .jsonl of demo-sepsis-01 is skipped, and said so
    skipped = query(warehouse, "select source_file, reason from raw.loads where status = 'skipped'")
    assert [p.rsplit("/", 1)[-1] for p, _ in skipped] == ["demo-sepsis-01.csv"]
    assert "demo-sepsis-01.jsonl" in skipped[0][1]


def test_loading_twice_adds_nothing_and_exits_zero(cli, warehouse):
    load_demo_sepsis(cli)
    counts = [scalar(warehouse, f"select count(*) from raw.{t}") for t in ("loads", "narratives", "tts_records", "validations")]
    again = load_demo_sepsis(cli)
    assert "nothing new to load" in again.output
    assert [scalar(warehouse, f"select count(*) from raw.{t}") for t in ("loads", "narratives", "tts_records", "validations")] == counts


def test_changed_file_is_appended_as_a_new_version(cli, warehouse, tmp_path):
    folder = tmp_path / "h"
    folder.mkdir()
    (folder / "case1.bsv").write_text("admitted | 0\nfever | 4\n")
    cli("load", "cases", "--cohort", "c", "--tts", f"H={folder}")
    (folder / "case1.bsv").write_text("admitted | 0\nfever | 6\n")
    cli("load", "cases", "--cohort", "c", "--tts", f"H={folder}")
    assert query(warehouse, "select load_id, count(*) from raw.tts_records group by load_id order by 1") == [(1, 2), (2, 2)]


def test_file_with_wrong_structure_is_rejected_whole_but_its_records_stay(cli, warehouse, tmp_path):
    folder = tmp_path / "h"
    folder.mkdir()
    (folder / "good.csv").write_text("event,time\nadmitted,0\n")
    (folder / "noheader.csv").write_text("admitted,0\nfever,4\n")
    (folder / "prose.bsv").write_text("Here is the table you asked for:\nIt has no rows.\n")
    result = cli("load", "cases", "--cohort", "c", "--tts", f"H={folder}")
    assert "rejected whole" in result.output and "noheader.csv" in result.output and "prose.bsv" in result.output
    rows = dict(query(warehouse, "select regexp_extract(source_file, '[^/]+$'), status from raw.loads"))
    assert rows == {"good.csv": "loaded", "noheader.csv": "rejected", "prose.bsv": "rejected"}
    assert scalar(warehouse, "select count(*) from raw.tts_records where file_status = 'rejected'") == 4
    failed = query(warehouse, "select expectation, unexpected_count from raw.validations where not success and severity = 'critical' order by 1")
    assert failed == [("ExpectColumnValuesToBeBetween", 2), ("ExpectColumnValuesToBeInSet", 1)]


def test_interrupted_load_leaves_nothing_and_resumes(cli, warehouse, monkeypatch):
    from ingest.load import validation

    def crash(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(validation, "insert_outcomes", crash)
        interrupted = cli("load", "cases", "--cohort", "sepsis", "--narratives", SEPSIS / "narratives",
                          "--tts", f"H={SEPSIS / 'tts_h'}", expect=1)
    assert "Aborted" in interrupted.output
    assert scalar(warehouse, "select count(*) from raw.loads") == 0
    assert scalar(warehouse, "select count(*) from raw.tts_records") == 0
    load_demo_sepsis(cli)
    assert scalar(warehouse, "select count(distinct case_id) from raw.narratives") == 4


def test_bad_arguments_name_the_fix(cli, tmp_path):
    result = cli("load", "cases", "--cohort", "c", "--tts", f"H={tmp_path / 'missing'}", expect=2)
    assert "is not a directory" in result.output and "Fix:" in result.output
    result = cli("load", "cases", "--cohort", "c", "--tts", "nodir", expect=2)
    assert "SOURCE=DIR" in result.output
