"""One rule decides which characters are escaped on the terminal (`printable`) and in problems.jsonl; the JSON
form stays valid JSON that reads back as the raw text, above the BMP too."""
import json

from tests.support.run_inputs import png, prompts
from vistar.cli.common import printable
from vistar.engine.runner import ScoreConfig, run_score
from vistar.textsafe import json_escape

# BEL, soft hyphen, Arabic letter mark, bidi override, line separator, private use, language tag (U+E0001)
UNSAFE = "\x07\xad\u061c\u202e\u2028\ue000\U000e0001"


def test_terminal_and_problems_file_escape_the_same_characters(tmp_path):
    png(tmp_path / "imgs" / "m" / "ok.png")
    prompts(tmp_path / "p.vistar", ['ok: [GD|TR] "A"', f'bad{UNSAFE}: no angle here'])
    run_score(ScoreConfig(images=tmp_path / "imgs", prompts=tmp_path / "p.vistar", out=tmp_path / "run"))
    raw = (tmp_path / "run" / "problems.jsonl").read_text(encoding="utf-8")
    assert not any(ch in raw for ch in UNSAFE)
    assert any(UNSAFE in json.loads(line)["item"] + json.loads(line)["message"] for line in raw.splitlines())
    assert not any(ch in printable(UNSAFE) for ch in UNSAFE)


def test_json_escape_writes_surrogate_pairs_above_the_bmp():
    assert json_escape("\u202e") == "\\u202e"
    assert json_escape("\U000e0001") == "\\udb40\\udc01"   # 0xE0001 - 0x10000 = 0xD0001: 0x340 and 0x001 in 10 bits
    assert json.loads(f'"{json_escape(chr(0x10FFFF))}"') == chr(0x10FFFF)
