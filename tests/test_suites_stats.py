"""Corpus statistics against hand-computed values on toy corpora."""
from __future__ import annotations

import pytest

from vistar.prompts_dsl import parse_prompt
from vistar.suites.stats import core_similarity, near_duplicates, suite_stats, tokenize, yule


def test_tokenize_folds_case_strips_edge_punctuation_and_keeps_indic_words():
    assert tokenize('A "GAME OVER" mock-up, $49.99!') == ["a", "game", "over", "mock-up", "49.99"]
    assert tokenize("नमस्ते दुनिया") == ["नमस्ते", "दुनिया"]  # vowel signs stay inside the word
    assert tokenize(" -- ") == []


def test_yule_on_a_hand_computed_corpus():
    # the=3, cat=dog=saw=end=1: N=7, V=5, M2 = 3^2 + 4*1^2 = 13
    y = yule("the cat saw the dog the end".split())
    assert (y.tokens, y.types, y.m2) == (7, 5, 13)
    assert y.k == pytest.approx(1e4 * 6 / 49)     # 10^4 (M2 - N) / N^2 = 1224.49
    assert y.i == pytest.approx(25 / 8)           # V^2 / (M2 - V) = 3.125
    assert y.i_n == pytest.approx(49 / 6)         # N^2 / (M2 - N) = 10^4 / K
    assert y.i_n == pytest.approx(1e4 / y.k)


def test_yule_i_is_undefined_without_repetition_and_k_is_zero():
    y = yule(["a", "b", "c"])
    assert y.k == 0 and y.i is None and y.i_n is None
    assert yule([]).k is None


def test_more_repetition_means_higher_k_and_lower_i():
    varied = yule("a b c d e f a b".split())
    repetitive = yule("a a a a b b c c".split())
    assert repetitive.k > varied.k and repetitive.i < varied.i


def test_suite_stats_counts_and_mean_length():
    prompts = [parse_prompt('[GD|TR] A red "SALE" sign {set="core"}', id="a"),
               parse_prompt('[GD|GC] A red cube {set="hard"}', id="b"),
               parse_prompt("[PH|GC] Two blue spheres, touching", id="c")]
    s = suite_stats(prompts)
    assert s.prompts == 3
    assert s.by_set == {"core": 1, "hard": 1, "unset": 1}
    assert s.by_role == {"GD": 2, "PH": 1}
    assert s.by_angle == {"GC": 2, "TR": 1}
    assert s.by_pair == {"GD|GC": 1, "GD|TR": 1, "PH|GC": 1}
    # tokens: [a red sale sign] [a red cube] [two blue spheres touching] -> 4 + 3 + 4
    assert s.mean_tokens == pytest.approx(11 / 3)
    assert s.mean_chars == pytest.approx((len('A red "SALE" sign') + len("A red cube") + len("Two blue spheres, touching")) / 3)
    # a=2, red=2, the rest once: N=11, V=9, M2 = 4 + 4 + 7 = 15
    assert (s.yule.tokens, s.yule.types, s.yule.m2) == (11, 9, 15)


def test_near_duplicates_by_token_set_jaccard():
    prompts = [parse_prompt("[GD|GC] A red cube on a table", id="x"),
               parse_prompt("[GD|GC] a RED cube, on a table!", id="y"),
               parse_prompt("[GD|GC] A blue sphere in the sky", id="z")]
    assert core_similarity(prompts[0].core, prompts[1].core) == 1.0
    # {a, red, cube, on, table} vs {a, blue, sphere, in, the, sky}: 1 shared of 10
    assert core_similarity(prompts[0].core, prompts[2].core) == pytest.approx(0.1)
    assert near_duplicates(prompts, threshold=0.5) == [("x", "y", 1.0)]


@pytest.mark.parametrize("threshold", [0.0, 0.2, 0.34, 0.5, 0.75, 1.0, 1.1])
def test_near_duplicates_equals_the_all_pairs_definition(threshold):
    """The prefix-filtered join finds exactly the pairs a brute-force comparison finds."""
    import random
    from itertools import combinations

    rng = random.Random(7)
    vocabulary = [f"w{i}" for i in range(12)]
    cores = [" ".join(rng.choice(vocabulary) for _ in range(rng.randint(0, 6))) or "" for _ in range(60)]
    prompts = [parse_prompt(f"[GD|GC] {c}", id=f"p{i}") for i, c in enumerate(cores)]
    expected = sorted(((a.id, b.id, core_similarity(a.core, b.core)) for a, b in combinations(prompts, 2)
                       if core_similarity(a.core, b.core) >= threshold), key=lambda t: (-t[2], t[0], t[1]))
    assert near_duplicates(prompts, threshold) == expected
    assert any(not p.core for p in prompts)  # empty cores are covered too
