"""TR validity beyond the test fixtures: does an exact render score ~1, and correct > one typo > wrong hold?

    python benchmarks/bench_tr_validity.py plain
    python benchmarks/bench_tr_validity.py backgrounds [--n 200] [--seed 0] [--space-prob 1.0 0.1]
    python benchmarks/bench_tr_validity.py posters [--split tuning|hard|photo|coins|stripes|validation] [--n 60] [--seed 0]
    python benchmarks/bench_tr_validity.py glyphs [--n 60] [--seed 0] [--glyphs I l 1] [--over photos|stripes]
                                                  [--stripes-when-sure 0|1]

plain: vistar.synth.text.render_text posters, 512², for 10 phrases (digits, punctuation, mixed case, a
20-letter word, sentences that wrap to 2-4 lines) in every TrueType font under /usr/share/fonts (plus Pillow's
default), then 7 ink/background pairs down to grey 120 on 150, rotations of -8° to 12°, and 12-24 px text.

backgrounds: N one-line phrases (random phrase, font from vistar.synth.text.available_fonts, size 26-43 px, ink colour,
optional black outline, position) are drawn with vistar.synth.text.overlay_text over scikit-image's astronaut,
brick, grass, coffee, chelsea and rocket (512²). Each is drawn three times: the phrase, the phrase with one
letter changed, and an unrelated phrase; all are scored against the phrase. Reported per `features.ocr.space_prob`
(1.0 = RapidOCR's plain greedy CTC decode, 0.1 = the default space restoration): share of correct renders with
TR >= 0.9, mean TR, share whose only error is a missing or extra space, and the ladder correct > typo > wrong.

posters: vistar.validity.tr's rotated multi-line / two-column posters over photos and textures with decorative
rings, dots and stars, in Latin and Latin with diacritics (eight languages), each drawn correct, with one typo and with one word
missing (`--split tuning`, `hard`, `photo`, `coins` and `stripes` (vistar.validity.tr_tuning) are what the metric's parameters were
chosen on; `validation` is what `vistar validate` runs). Prints the validity rows, then the calibration of the
glyph filter (`glyph_gap`, `min_glyph_confidence`): confidence and distance to the nearest longer line of the one-
and two-character readings that are words of the poster vs those that are not (decorations); then that of the
stray-line rule (`stray_angle`): the lines it would drop at each angle, words of the poster vs not.

glyphs: vistar.validity.tr_tuning's lone-glyph posters (a line of one digit or capital under tuning-photo posters):
how many lone glyphs are read, with RapidOCR's crops and faint boxes down to 0.3 (the stage before the upright
re-read) and as shipped, per glyph, and for each glyph missed the last lines the OCR read instead. `--glyphs`
draws other glyphs (e.g. the validation posters' `I`, `1`) to measure how they are read; `--over stripes` puts
the posters over the two stripe textures (LONE_GLYPH_STRIPES); `--stripes-when-sure` sets
`features.ocr.stripes_when_sure` (default: the shipped value).
"""
from __future__ import annotations

import argparse
import copy
import time
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from vistar.api import StageContext, StageInput
from vistar.engine.params import metric_params
from vistar.features.ocr import STAGE
from vistar.metrics.tr import METRIC
from vistar.ontology import Ontology
from vistar.synth.text import available_fonts, load_font, overlay_text, render_text

PHRASES = ("Harbour Lights Festival", "GOLDEN GATE BAKERY", "Meet me at 8 pm", "Pure Mountain Water", "LAST CHANCE SALE",
           "the blue door inn", "Organic Farm Shop", "Vote YES on 12", "Summer Jazz Night", "EXIT ONLY")
WRONG = "PURPLE MOUNTAIN MAJESTY"


def backgrounds() -> dict[str, Image.Image]:
    import skimage.data

    return {name: Image.fromarray(getattr(skimage.data, name)()).convert("RGB").resize((512, 512))
            for name in ("astronaut", "brick", "grass", "coffee", "chelsea", "rocket")}


def one_typo(text: str) -> str:
    """Change the middle letter of the longest word (X, or Q where it already is X)."""
    words = text.split(" ")
    i = max(range(len(words)), key=lambda k: len(words[k]))
    j = len(words[i]) // 2
    c = words[i][j]
    new = "Q" if c.upper() == "X" else "X"
    words[i] = words[i][:j] + (new.lower() if c.islower() else new) + words[i][j + 1:]
    return " ".join(words)


def cases(n: int, seed: int, bgs: dict) -> list[dict]:
    rng = np.random.default_rng(seed)
    fonts = list(available_fonts().values())
    draw = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    out = []
    while len(out) < n:
        text = PHRASES[rng.integers(len(PHRASES))]
        font, size = fonts[rng.integers(len(fonts))], int(rng.integers(26, 44))
        width = max(draw.textlength(t, font=load_font(font, size)) for t in (text, one_typo(text), WRONG))
        if width > 480:
            continue
        out.append({"bg": list(bgs)[rng.integers(len(bgs))], "text": text, "font": font, "font_size": size,
                    "ink": tuple(int(v) for v in rng.integers(0, 256, 3)), "stroke": 2 * int(rng.integers(0, 2)),
                    "xy": (float(rng.uniform(10, 502 - width)), float(rng.uniform(10, 450)))})
    return out


PLAIN = ("CALL 555-0199 NOW", "OPEN 24/7!", "Don't Panic, Stay Calm.", "Hello World", "INTERNATIONALISATION",
         "Big Sale: 50% off everything today only", "Quantum Bakery & Co.", "route 66",
         "The quick brown fox jumps over the lazy dog", "Line one of text, line two of text, line three of text, and a fourth line too")


def plain() -> None:
    ontology = Ontology.load(None)
    params, ctx = metric_params(ontology, "TR"), StageContext(features=ontology.data["features"])

    def ladder(expected: str, draw) -> tuple[float, bool]:
        s = {}
        for kind, shown in (("correct", expected), ("typo", one_typo(expected)), ("wrong", WRONG)):
            [ocr] = STAGE.compute([StageInput(np.asarray(draw(shown)), None, {})], ctx)
            s[kind] = METRIC.fn({"ocr": ocr}, {"text": expected}, params, None).score
        return s["correct"], s["correct"] > s["typo"] > s["wrong"]

    fonts = [None] + sorted(str(p) for p in Path("/usr/share/fonts").rglob("*.ttf"))
    groups = {
        "phrases x fonts": [(p, lambda s, f=f: render_text(s, size=512, font_size=32, font=f)) for f in fonts for p in PLAIN],
        "colours": [(p, lambda s, bg=bg, ink=ink: render_text(s, size=512, font_size=40, background=bg, ink=ink))
                    for bg, ink in (((20, 20, 30), (240, 240, 200)), ((10, 10, 10), (255, 220, 0)), ((150, 150, 150), (120, 120, 120)),
                                    ((200, 60, 60), (230, 110, 110)), ((40, 40, 120), (70, 70, 170)), ((245, 245, 240), (200, 200, 195)),
                                    ((0, 90, 0), (255, 0, 0)))
                    for p in PLAIN[:4]],
        "rotated": [(p, lambda s, a=a: render_text(s, size=512, font_size=40).rotate(a, resample=Image.BICUBIC, fillcolor=(245, 245, 240)))
                    for a in (-8, -5, -3, 3, 5, 8, 12) for p in PLAIN[:4]],
        "small text": [(p, lambda s, fs=fs, size=size: render_text(s, size=size, font_size=fs))
                       for fs in (12, 16, 20, 24) for size in (512, 1024) for p in PLAIN[:4]],
    }
    for name, items in groups.items():
        results = [ladder(p, draw) for p, draw in items]
        correct = np.array([c for c, _ in results])
        print(f"{name:16s} {len(results):4d} renders  exact TR>=0.9 {np.mean(correct >= 0.9):.1%}  TR=1 {np.mean(correct == 1):.1%}  "
              f"ladder {np.mean([ok for _, ok in results]):.1%}  lowest {correct.min():.3f}")


def backgrounds_bench(args) -> None:
    ontology = Ontology.load(None)
    params = metric_params(ontology, "TR")
    bgs = backgrounds()
    items = cases(args.n, args.seed, bgs)
    for space_prob in args.space_prob:
        features = copy.deepcopy(ontology.data["features"])
        features["ocr"] = {**features["ocr"], "space_prob": space_prob}
        ctx, scores, space_only, start = StageContext(features=features), [], 0, time.perf_counter()
        for case in items:
            style = {k: case[k] for k in ("font", "font_size", "ink", "stroke", "xy")}
            row = {}
            for kind, shown in (("correct", case["text"]), ("typo", one_typo(case["text"])), ("wrong", WRONG)):
                [ocr] = STAGE.compute([StageInput(np.asarray(overlay_text(bgs[case["bg"]], shown, **style)), None, {})], ctx)
                result = METRIC.fn({"ocr": ocr}, {"text": case["text"]}, params, None)
                row[kind] = result.score
                if kind == "correct":
                    rec, exp = result.details["recognised"], result.details["expected"]
                    space_only += rec != exp and rec.replace(" ", "") == exp.replace(" ", "")
            scores.append(row)
        c, t, w = (np.array([r[k] for r in scores]) for k in ("correct", "typo", "wrong"))
        print(f"space_prob {space_prob}: {len(c)} renders  correct TR>=0.9 {np.mean(c >= 0.9):.1%}  mean {c.mean():.3f}  "
              f"space-only errors {space_only / len(c):.1%}  correct>typo {np.mean(c > t):.1%}  typo>wrong {np.mean(t > w):.1%}  "
              f"({(time.perf_counter() - start) / len(c) / 3 * 1000:.0f} ms/image)")


def short_readings(lines: list, shortest: int = 1, longest: int = 2, below: float = 2.0) -> list[tuple[str, float, float]]:
    """(text, confidence, distance to the nearest longer line in median line heights) of each reading of
    `shortest`-`longest` characters with a letter or digit read below confidence `below`, measured as TR's glyph
    filter measures it (levelled boxes)."""
    from vistar.metrics.text_layout import level_boxes
    from vistar.metrics.text_similarity import normalize_text

    if not lines:
        return []
    boxes, median = level_boxes(lines)
    texts = [normalize_text(ln.text).replace(" ", "") for ln in lines]
    longer = [b for b, t in zip(boxes, texts) if len(t) > longest]
    out = []
    for box, text in zip(boxes, texts):
        if shortest <= len(text) <= longest and box[4].confidence < below and any(c.isalnum() for c in text) and longer:
            gap = min(max(o[0] - box[2], box[0] - o[2], o[1] - box[3], box[1] - o[3], 0.0) for o in longer) / median
            out.append((text, box[4].confidence, gap))
    return out


def posters(args) -> None:
    from vistar.metrics.text_similarity import normalize_text
    from vistar.validity.tr import VALIDATION, Scorer, ladder_cases, ladder_rows, score_ladder
    from vistar.validity.tr_tuning import SPLITS

    split = {**SPLITS, "validation": VALIDATION}[args.split]
    start = time.perf_counter()
    scored = score_ladder(ladder_cases(args.n, args.seed, split), Scorer())
    for row in ladder_rows(scored, f"posters/{args.split}"):
        print(f"{row.set:28s} n={row.n:3d}  {row.measure:24s} {row.value:6.3f}  goal {row.goal:8s} {'met' if row.met else 'NOT met'}"
              + (f"\n    {row.note}" if row.note and not row.met else ""))
    for label, sizes in (("1-2 character readings", dict()), ("3-4 character readings below 0.9", dict(shortest=3, longest=4, below=0.9))):
        short: dict[str, list] = {"word": [], "decoration": []}
        for case in scored:
            words = set(normalize_text(case["expected"]).split())
            for ocr in case["ocr"].values():
                for text, confidence, gap in short_readings(list(ocr.lines), **sizes):
                    short["word" if text in words else "decoration"].append((confidence, gap))
        for kind, values in short.items():
            if values:
                conf, gap = np.array(values).T
                print(f"{label} that are {kind:10s}: {len(values):3d}  confidence {conf.min():.2f}-{conf.max():.2f}  "
                      f"distance to the nearest longer line {gap.min():.2f}-{gap.max():.2f} line heights")
    stray_calibration(scored)
    print(f"({(time.perf_counter() - start) / len(scored) / 3 * 1000:.0f} ms/image)")


def stray_calibration(scored: list[dict]) -> None:
    """Per candidate `stray_angle`, the readings TR's stray rule drops (confidence >= min_confidence) that are
    words of the poster (each word within half its letters of a word asked for) vs the rest."""
    from vistar.metrics.text_filters import stray_lines
    from vistar.metrics.text_similarity import normalize_text, word_cost

    params = metric_params(Ontology.load(None), "TR")
    for angle in (4.0, 6.0, 8.0, 10.0, 15.0):
        counts = {"word": 0, "not": 0}
        for case in scored:
            asked = normalize_text(case["expected"]).split()
            for ocr in case["ocr"].values():
                lines = [ln for ln in ocr.lines if ln.confidence >= float(params.min_confidence)]
                for k in stray_lines(lines, float(params.stray_confidence), angle):
                    words = normalize_text(lines[k].text).split()
                    counts["word" if words and all(min(word_cost(w, a) for a in asked) <= 0.5 for w in words) else "not"] += 1
        print(f"stray_angle {angle:4.1f}: drops {counts['word']} readings that are words of the poster, {counts['not']} that are not")


def glyphs(args) -> None:
    from vistar.api import StageContext
    from vistar.features import ocr_batched
    from vistar.metrics.text_similarity import normalize_text
    from vistar.validity.tr import Scorer
    from vistar.validity.tr_tuning import LONE_GLYPH_STRIPES, LONE_GLYPH_TUNING, LONE_GLYPHS, lone_glyph_cases

    split = LONE_GLYPH_STRIPES if args.over == "stripes" else LONE_GLYPH_TUNING
    cases = lone_glyph_cases(args.n, args.seed, tuple(args.glyphs or LONE_GLYPHS), split)
    scorer, shipped = Scorer(), (ocr_batched.FAINT_BOX_SCORE, ocr_batched.reread_glyphs)
    if args.stripes_when_sure is not None:
        ocr = {**scorer.ctx.features.get("ocr", {}), "stripes_when_sure": bool(args.stripes_when_sure)}
        scorer.ctx = StageContext(features={**scorer.ctx.features, "ocr": ocr})
    for name, faint, reread in (("RapidOCR crops, faint boxes from 0.3", 0.3, lambda *a: None), ("shipped", *shipped)):
        ocr_batched.FAINT_BOX_SCORE, ocr_batched.reread_glyphs = faint, reread
        read = exact = 0
        missed, per_glyph = [], {}
        for case in cases:
            ocr = scorer.ocr(case["image"])
            result = scorer.score(ocr, case["expected"])
            found = normalize_text(case["glyph"]) in (result.details.get("recognised") or "").split()
            read += found
            tally = per_glyph.setdefault(case["glyph"], [0, 0])
            tally[0], tally[1] = tally[0] + found, tally[1] + 1
            exact += (result.score or 0.0) >= 0.95
            if not found:   # what the OCR read instead: the last lines (the glyph closes the poster)
                missed.append(f"{case['glyph']!r} over {case['backdrop']}: "
                              + ", ".join(f"{line.text!r} {line.confidence:.2f}" for line in ocr.lines[-3:]))
        print(f"{name:38s} lone glyph read {read}/{len(cases)}  correct render TR>=0.95 {exact}/{len(cases)}  ("
              + ", ".join(f"{g} {k}/{m}" for g, (k, m) in sorted(per_glyph.items())) + ")")
        for line in missed:
            print(f"    missed {line}")
    ocr_batched.FAINT_BOX_SCORE, ocr_batched.reread_glyphs = shipped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=("plain", "backgrounds", "posters", "glyphs"))
    parser.add_argument("--split", choices=("tuning", "hard", "photo", "coins", "stripes", "validation"), default="tuning")
    parser.add_argument("--n", type=int, default=None, help="backgrounds: 200, posters and glyphs: 60")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--space-prob", type=float, nargs="+", default=[1.0, 0.1])
    parser.add_argument("--glyphs", nargs="+", default=None, help="glyphs: the lone glyphs drawn (default: LONE_GLYPHS)")
    parser.add_argument("--over", choices=("photos", "stripes"), default="photos", help="glyphs: the posters' backgrounds")
    parser.add_argument("--stripes-when-sure", type=int, choices=(0, 1), default=None,
                        help="glyphs: features.ocr.stripes_when_sure (default: shipped)")
    args = parser.parse_args()
    args.n = args.n or (200 if args.part == "backgrounds" else 60)
    {"plain": lambda: plain(), "backgrounds": lambda: backgrounds_bench(args), "posters": lambda: posters(args),
     "glyphs": lambda: glyphs(args)}[args.part]()


if __name__ == "__main__":
    main()
