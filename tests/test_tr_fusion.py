"""TR's pure parts against hand-computed values: normalisation policy, char similarity, word alignment, the fusion."""
from __future__ import annotations

import random

import pytest

from vistar.metrics.text_similarity import (
    MAX_JOINED,
    char_similarity,
    joined_cost,
    length_floor,
    letter_floor,
    normalize_text,
    word_cost,
    word_distance,
    word_similarity,
)
from vistar.metrics.tr import tr_score


@pytest.mark.parametrize("raw, expected", [
    ("ＧＲＡＮＤ　ＯＰＥＮＩＮＧ", "grand opening"),       # NFKC: full-width letters and ideographic space
    ("Ofﬁce", "office"),                                   # NFKC: the "fi" ligature
    ("Grand Opening", "grand opening"),                     # casefold
    ("STRASSE straße", "strasse strasse"),                  # casefold, not lower(): ß → ss
    ("DON'T STOP", "dont stop"),                            # apostrophes are deleted ...
    ("DON’T ʼEM", "dont em"),                               # ... typographic ones too
    ("HELLO,WORLD!", "hello world"),                        # ... other punctuation becomes a space
    ("well-known (re)start", "well known re start"),
    ("«Qué?» ¡Sí!", "qué sí"),                              # diacritics are kept
    ("SALE 50% $5 +1 ©", "sale 50 $5 +1 ©"),                # % is punctuation; $ + © are symbols, kept
    ("  a \t b\n\nc  ", "a b c"),                           # whitespace collapsed and trimmed
    ("ΚΑΛΗ ΟΡΕΞΗ", "kaλh opeξh"),                           # Greek letters drawn like Latin ones read as Latin:
    ("Καλή ταβέρνα", "kaλή τaβέpva"),                       # Η is H, η is n; accents kept by default
    ("İSTANBUL İzmir", "istanbul izmir"),                   # Turkish İ casefolds to i + a dot above: read as i
    ("...", ""),
])
def test_normalisation_policy(raw, expected):
    assert normalize_text(raw) == expected


def test_normalisation_switches():
    assert normalize_text("Don't, Stop", case_sensitive=True) == "Dont Stop"
    assert normalize_text("Don't, Stop", strip_punctuation=False) == "don't, stop"
    assert normalize_text("Crème brûlée, Καλή όρεξη", fold_accents=True) == "creme brulee kaλn opeξn"
    assert normalize_text("Łódź", fold_accents=True) == "łodz"  # ł is a letter of its own, not l with a mark


@pytest.mark.parametrize("a, b, value", [
    ("kitten", "sitting", 1 - 3 / 7),   # distance 3 (k→s, e→i, +g), longer string 7
    ("grand opening", "grand opening", 1.0),
    ("abc", "xyz", 0.0),
    ("", "", 1.0),                      # nothing asked, nothing read
    ("abc", "", 0.0),
    ("", "abc", 0.0),
])
def test_char_similarity(a, b, value):
    assert char_similarity(a, b) == pytest.approx(value)


@pytest.mark.parametrize("a, b, value", [
    ("a b c", "a b d", 1 - 1 / 3),                   # one wrong word of three
    ("fresh coffee dailx", "fresh coffee daily", 1 - (1 / 5) / 3),   # a typo costs 1/5 of a word ...
    ("fresh coffee", "fresh coffee daily", 1 - 1 / 3),              # ... a missing word a whole one
    ("no no", "no no no", 1 - 1 / 3),                # a dropped repeat costs: words are a multiset, not a set
    ("grandopening", "grand opening", 1 - (1 / 13) / 2),  # a lost space: one character of the pair
    ("grand openi ng", "grand opening", 1 - (1 / 8) / 3),   # a space too many: one character of the pair
    ("coffee nonono", "coffee no no no", 1 - (2 / 8) / 4),   # three words as one: two spaces of the run's 8 chars
    ("nono", "no no no", 1 - (1 + 1 / 5) / 3),      # ... but a word lost from the run still costs a whole word
    ("grandopeningtoday", "grand opening today", 1 - (2 / 19) / 3),   # MAX_JOINED words as one
    # four as one, past MAX_JOINED: three joined (their last piece "efgh" for "ef" half wrong) and the fourth lost
    ("abcdefgh", "ab cd ef gh", 1 - (2 / 8 + 1 / 2 + 1) / 4),
    ("hello xqz", "hello", 1 - 1 / 2),               # an extra word costs one word, not a cheap "split"
    ("b a", "a b", 0.0),                             # order counts: each word is out of place
    ("a", "", 0.0),
    ("", "", 1.0),
])
def test_word_similarity(a, b, value):
    assert word_similarity(a, b) == pytest.approx(value)
    assert word_similarity(b, a) == pytest.approx(value)   # symmetric


def test_fusion_one_letter_dropped():
    # "grand openng" vs "grand opening": 1 deletion over 13 chars; words: openng for opening costs 1/7 of 2 words
    r = tr_score("GRAND OPENNG", "Grand Opening", w_char=0.5)
    assert r["char"] == pytest.approx(12 / 13)
    assert r["token"] == pytest.approx(1 - (1 / 7) / 2)
    assert r["score"] == pytest.approx(0.5 * 12 / 13 + 0.5 * 13 / 14)
    assert (r["recognised"], r["expected"]) == ("grand openng", "grand opening")


def test_fusion_missing_word():
    # "fresh coffee" vs "fresh coffee daily": 6 deletions (" daily") over 18 chars; 1 of 3 words missing
    r = tr_score("FRESH COFFEE", "FRESH COFFEE DAILY", w_char=0.5)
    assert (r["char"], r["token"]) == (pytest.approx(12 / 18), pytest.approx(2 / 3))
    assert r["score"] == pytest.approx(2 / 3)


@pytest.mark.parametrize("w", [0.0, 0.25, 0.5, 0.75, 1.0])
def test_a_typo_costs_less_than_a_missing_word_at_any_weight(w):
    expected = "FRESH COFFEE DAILY"
    typo, missing = tr_score("FRESH COFFEE DAILX", expected, w)["score"], tr_score("FRESH COFFEE", expected, w)["score"]
    assert typo == pytest.approx(w * 17 / 18 + (1 - w) * (1 - 1 / 15)) and typo > missing


def test_a_dropped_repeated_word_costs():
    # the old token Jaccard compared sets: {buy, one, get} either way, a dropped "ONE" cost nothing there
    r = tr_score("BUY ONE GET", "BUY ONE GET ONE", w_char=0.5)
    assert r["token"] == pytest.approx(1 - 1 / 4) and r["char"] == pytest.approx(11 / 15)


def test_fusion_weight_endpoints_and_linearity():
    rec, exp = "SUMMER SAIE 50", "SUMMER SALE 50"   # 1 substitution over 14 chars; 1/4 of one of 3 words
    char, token = 1 - 1 / 14, 1 - (1 / 4) / 3
    assert tr_score(rec, exp, w_char=1.0)["score"] == pytest.approx(char)
    assert tr_score(rec, exp, w_char=0.0)["score"] == pytest.approx(token)
    assert tr_score(rec, exp, w_char=0.25)["score"] == pytest.approx(0.25 * char + 0.75 * token)


def test_fusion_normalises_both_sides():
    assert tr_score("don't—stop!", "DON’T STOP", w_char=0.5)["score"] == 1.0
    assert tr_score("Hello", "HELLO", w_char=0.5, case_sensitive=True)["score"] < 0.5


from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40), st.text(max_size=40), st.floats(0, 1))
def test_properties(rec, exp, w):
    once = normalize_text(rec)
    assert normalize_text(once) == once                      # idempotent
    r = tr_score(rec, exp, w_char=w)
    assert 0.0 <= r["char"] <= 1.0 and 0.0 <= r["token"] <= 1.0 and -1e-12 <= r["score"] <= 1.0 + 1e-12
    assert tr_score(exp, rec, w_char=w)["score"] == pytest.approx(r["score"])  # symmetric
    assert tr_score(exp, exp, w_char=w)["score"] == pytest.approx(1.0)


def test_whole_texts_stay_out_of_the_word_pairs_cache():
    # one pair per image: cached, a long run would keep every image's text and push out the word pairs
    from vistar.metrics.text_similarity import char_distance

    char_distance.cache_clear()
    assert char_similarity("grand opening today", "grand openning today") == 1 - 1 / 20
    assert char_distance.cache_info().currsize == 0


def test_three_words_read_as_one_cost_their_lost_spaces():
    # the worked example: "nonono" for "no no no" loses two spaces of the run's 8 characters
    r = tr_score("nonono", "no no no", w_char=0.5)
    assert (r["char"], r["token"]) == (pytest.approx(1 - 2 / 8), pytest.approx(1 - (2 / 8) / 3))
    assert r["score"] == pytest.approx((0.75 + 1 - 1 / 12) / 2)


def test_the_word_alignment_skips_only_joins_that_cannot_win():
    # the alignment bounds each join below and skips it when it cannot beat the cell's best: the same distances
    # as trying every join, on random readings that lose spaces, letters and words and gain some
    def every_join(rec: list[str], exp: list[str]) -> float:
        n, m = len(exp), len(rec)
        d = [[float(i + j) if i == 0 or j == 0 else 0.0 for j in range(m + 1)] for i in range(n + 1)]
        for i in range(1, n + 1):
            for j in range(1, m + 1):
                options = [d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + word_cost(rec[j - 1], exp[i - 1])]
                for k in range(2, MAX_JOINED + 1):
                    if i >= k:
                        options.append(d[i - k][j - 1] + joined_cost(rec[j - 1], tuple(exp[i - k:i])))
                    if j >= k:
                        options.append(d[i - 1][j - k] + joined_cost(exp[i - 1], tuple(rec[j - k:j])))
                d[i][j] = min(options)
        return d[n][m]

    rng = random.Random(7)
    bank = "no ha by grand opening café crème łódź kraków fresh coffee daily bakery a i ok q̃ ọ̀rẹ́".split()
    for _ in range(200):
        exp = [rng.choice(bank) for _ in range(rng.randint(1, 12))]
        text = " ".join(exp)
        for _ in range(rng.randint(0, 5)):   # lose a letter or a space, gain a letter
            k = rng.randrange(len(text) + 1)
            text = rng.choice([text[:k] + text[k + 1:], text[:k] + "x" + text[k:]])
        rec = text.split()
        assert word_distance(rec, exp) == pytest.approx(every_join(rec, exp), abs=1e-12)


def test_the_join_bounds_never_exceed_the_join():
    # the two lower bounds the alignment skips joins by, against the split search itself: words made of the
    # parts (tight: a lost space), of the parts with letters lost or gained, and unrelated ones
    rng = random.Random(11)
    # marks with no precomposed letter (q̃, Yoruba ọ̀) count half in the char distance: the length bound stands aside
    bank = "no ha by grand opening café crème łódź fresh coffee a i ok q̃ ọ̀rẹ́".split()
    for _ in range(400):
        parts = [rng.choice(bank) for _ in range(rng.randint(2, MAX_JOINED))]
        word = rng.choice(["".join(parts), "".join(parts)[1:], "".join(parts) + "x", rng.choice(bank), "xyz"])
        cost = joined_cost(word, tuple(parts))
        assert length_floor(word, parts) <= cost + 1e-12 and letter_floor(word, parts) <= cost + 1e-12


def test_a_word_lost_from_a_run_costs_a_whole_word_even_with_marks_counted_half():
    # "q̃" (q and a combining tilde) read as nothing costs its whole word as a deletion does, not 0.75 through a join
    assert joined_cost("ab", ("ab", "q̃")) == pytest.approx(1 + 1 / 5)   # q̃ is two code points: a run of 5
    assert word_distance(["ab"], ["ab", "q̃"]) == 1.0
    assert word_distance(["ilé"], ["ilé", "ọ̀rẹ́"]) == 1.0
