"""The judge card on planted truth: a degenerate judge, a decent one, reference ids against a graded
judge, scales mapped onto each other, people's labels on a subset of queries; its figures against
scikit-learn, the krippendorff package and scipy on the same pairs; the command's text and JSON."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ctxeval._cli import cli
from ctxeval._errors import ConfigError
from ctxeval._judge.verbs import agreement
from ctxeval._stats.ppi import ppi_mean

Labels = dict[str, dict[str, int]]


def planted(
    n_queries: int = 40, docs: int = 10, seed: int = 1
) -> tuple[Labels, dict[str, dict[str, dict[str, float]]]]:
    """People's 1-5 grades (about a fifth relevant, >= 4) and six runs ranking them with growing noise,
    so that their order under people's labels is known: r0 best ... r5 worst."""
    rng = random.Random(seed)
    human: Labels = {}
    for q in range(n_queries):
        human[f"q{q:02d}"] = {f"d{d}": rng.choice([1, 1, 2, 2, 2, 3, 4, 5]) for d in range(docs)}
    runs = {}
    for r, noise in enumerate([0.3, 0.8, 1.5, 2.5, 4.0, 8.0]):
        runs[f"r{r}"] = {q: {d: g + rng.gauss(0, noise) for d, g in grades.items()} for q, grades in human.items()}
    return human, runs


def noisy(human: Labels, share: float, seed: int = 2) -> Labels:
    """The judge: people's grade, moved one step up or down for ``share`` of the pairs."""
    rng = random.Random(seed)
    out: Labels = {}
    for q, grades in human.items():
        out[q] = {}
        for d, g in grades.items():
            if rng.random() < share:
                g = min(5, max(1, g + rng.choice([-1, 1])))
            out[q][d] = g
    return out


def _pairs(a: Labels, b: Labels) -> tuple[list[int], list[int]]:
    both = sorted((q, d) for q in a for d in a[q] if d in b.get(q, {}))
    return [a[q][d] for q, d in both], [b[q][d] for q, d in both]


def _write(path: Path, labels: Labels) -> str:
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in labels.items() for d, g in docs.items()))
    return str(path)


def _write_runs(tmp: Path, runs: dict[str, dict[str, dict[str, float]]]) -> list[str]:
    out = []
    for name, run in runs.items():
        p = tmp / f"{name}.run"
        p.write_text("".join(f"{q} Q0 {d} 0 {s:.6f} {name}\n" for q, docs in run.items() for d, s in docs.items()))
        out.append(str(p))
    return out


def test_a_degenerate_judge_is_named_and_rejected() -> None:
    """The field report: a judge gave grade 4 to every pair it was asked about, 14 of the 81 pairs
    people labelled. The card says so (coverage 14/81, the degenerate check, kappa 0 by construction)
    and rejects it; no note asks to map one scale onto the other (both are 1-5)."""
    human, _ = planted(n_queries=9, docs=9, seed=5)  # 81 pairs
    asked = [(q, d) for q in sorted(human) for d in sorted(human[q])][::6][:14]
    judge: Labels = {}
    for q, d in asked:
        judge.setdefault(q, {})[d] = 4
    card = agreement(human, judge)
    assert card.coverage["human_pairs"] == 81 and card.coverage["both"] == 14
    assert card.coverage["share"] == pytest.approx(14 / 81)
    from scipy.stats import entropy

    d = card.degenerate
    assert {k: d[k] for k in ("grade", "share", "judgments", "flag")} == {
        "grade": 4,
        "share": 1.0,
        "judgments": 14,
        "flag": True,
    }
    # the degenerate check compares the grade distributions: the judge's carries no information, people's
    people = np.unique([g for docs in human.values() for g in docs.values()], return_counts=True)[1]
    assert d["entropy_judge"] == 0.0 and d["entropy_human"] == pytest.approx(entropy(people, base=2))
    assert card.labels["kappa"]["kappa"] == 0.0
    assert card.verdict["verdict"] == "reject"
    assert "a degenerate judge (grade 4 for 100% of its 14 labels)" in card.verdict["text"]
    assert "only 14 pairs both label" in card.verdict["text"]
    assert not any("map one scale" in n for n in card.notes)
    assert any("the judge labelled 17% of the pairs people labelled" in n for n in card.notes)
    text = str(card)
    assert "the judge used grade 4 only: kappa is 0 by construction" in text
    assert "the judge labelled 14 of the 81 pairs people labelled (17.3%)" in text


def test_kappa_where_one_grade_is_all_anyone_used_is_undefined() -> None:
    card = agreement({"q": {"a": 4, "b": 4, "c": 4}}, {"q": {"a": 4, "b": 4, "c": 4}})
    assert card.labels["kappa"]["kappa"] is None and card.labels["kappa_binary"]["kappa"] is None
    assert card.verdict["verdict"] == "none"
    assert card.verdict["text"].startswith("no verdict: at grade >= 4 one label is all anyone used")
    assert "kappa        undefined (one grade is all anyone used; scikit-learn: NaN) on 3 pairs" in str(card)
    assert "(too few labels to call the judge degenerate)" in str(card)


def test_a_decent_judge_on_planted_truth_and_its_figures_against_the_oracles(tmp_path: Path) -> None:
    """A judge that moves 15 % of people's grades one step: every label figure equals scikit-learn's /
    the krippendorff package's on the same pairs, the system ranking under its labels matches people's
    (scipy's tau on the card's own means), and the verdict lets it stand in for people's labels."""
    import krippendorff
    from scipy.stats import kendalltau
    from sklearn.metrics import cohen_kappa_score

    human, runs = planted()
    judge = noisy(human, 0.15)
    card = agreement(human, judge, _write_runs(tmp_path, runs))
    h, j = _pairs(human, judge)
    lab = card.labels
    assert lab["kappa"]["kappa"] == pytest.approx(cohen_kappa_score(h, j, labels=[1, 2, 3, 4, 5]))
    assert lab["kappa"]["kappa_quadratic"] == pytest.approx(
        cohen_kappa_score(h, j, labels=[1, 2, 3, 4, 5], weights="quadratic")
    )
    hb, jb = [int(g >= 4) for g in h], [int(g >= 4) for g in j]
    assert lab["kappa_binary"] == {
        "level": 4,
        "kappa": pytest.approx(cohen_kappa_score(hb, jb)),
        "exact_agreement": pytest.approx(np.mean(np.array(hb) == np.array(jb))),
    }
    assert lab["alpha_ordinal"] == pytest.approx(
        krippendorff.alpha(reliability_data=np.array([h, j], dtype=float), level_of_measurement="ordinal")
    )
    assert lab["leniency"]["ratio"] == pytest.approx(sum(jb) / sum(hb))
    means = card.means
    names = sorted(means)
    want_tau = kendalltau([means[n]["human"] for n in names], [means[n]["judge"] for n in names]).statistic
    assert card.ranking is not None and card.ranking["kendall_tau"] == pytest.approx(want_tau)
    order = sorted(names, key=lambda n: -means[n]["human"])
    assert order == ["r0", "r1", "r2", "r3", "r4", "r5"]  # the planted order
    assert card.verdict["verdict"] == "replace", card.verdict
    assert not card.degenerate["flag"]


def test_reference_ids_against_a_graded_judge_compare_binarized_labels_and_say_so() -> None:
    """People's reference ids (all 1: relevant; every other chunk unlabelled) against a judge's 1-5.
    Before, kappa read 0.0000 and agreement 0 %. The card binarizes the judge at >= 4, says so, and
    reports what can be measured: of the 6 referenced pairs the judge graded, it calls 4 relevant."""
    refs = {"q1": {"a": 1, "b": 1, "c": 1}, "q2": {"x": 1, "y": 1, "z": 1}}
    judge = {"q1": {"a": 5, "b": 4, "c": 2, "n1": 1}, "q2": {"x": 4, "y": 3, "z": 5, "n2": 2}}
    card = agreement(refs, judge)
    assert card.scales["human"]["name"] == "binary (relevant = 1)"
    assert card.scales["judge"]["name"] == "1-5 (RA-nWG)"
    assert card.scales["how"] == "the judge's 1-5 (RA-nWG) binarized at grade >= 4: people's labels are binary"
    assert card.labels["leniency"]["judge_rate"] == pytest.approx(4 / 6)
    assert (
        "the judge calls 4 of those 6 relevant (66.7%: its recall of people's relevant pairs)"
        in card.labels["positives_only"]
    )
    assert card.verdict["verdict"] == "none"
    assert "people's labels are all relevant" in card.verdict["text"]
    assert card.coverage["judge_only"] == 2


def test_sample_sets_with_reference_ids_and_their_retrieved_lists(tmp_path: Path) -> None:
    """A RAG team's files: per retriever a sample set with its retrieved ids and the same reference ids
    (people's relevant chunks, grade >= 4 of the planted truth); the judge's 1-5 grades as qrels. The
    card reads the references as such, binarizes the judge at >= 4, and ranks the retrievers (their
    retrieved lists) under both: the planted order, tau 1, and a verdict on the ranking alone."""
    human, runs = planted(n_queries=30, seed=4)
    judge = noisy(human, 0.1)
    refs = {q: [d for d, g in docs.items() if g >= 4] for q, docs in human.items()}
    paths = []
    for name in runs:
        p = tmp_path / f"{name}.jsonl"
        p.write_text(
            "".join(
                json.dumps(
                    {"query_id": q, "retrieved_ids": sorted(docs, key=lambda d: -docs[d])[:5], "reference_ids": refs[q]}
                )
                + "\n"
                for q, docs in runs[name].items()
            )
        )
        paths.append(str(p))
    card = agreement(paths[0], judge, paths)
    assert card.scales["human"]["name"] == "reference ids (binary: relevant or unlabelled)"
    assert card.coverage["human_pairs"] == sum(len(v) for v in refs.values())
    assert "labels       people's labels are all relevant" in str(card)
    assert card.ranking is not None and card.ranking["kendall_tau"] == 1.0
    assert sorted(card.means, key=lambda n: -card.means[n]["human"]) == ["r0", "r1", "r2", "r3", "r4", "r5"]
    assert card.verdict["text"] == (
        "compare systems with it, but its values are not people's: system tau 1.00 >= 0.83; label agreement "
        "cannot be measured on people's relevant-only labels; whether a run is fitted to the judge cannot be told "
        "(its grades barely vary)"
    )
    # on people's relevant-only pairs the judge's binarized grades are nearly all relevant: nothing to fit
    assert card.circularity is not None and card.circularity["cannot_tell"].startswith("the judge gives grade 1 to")
    three = agreement(paths[0], judge, paths[::2])  # over 3 runs tau moves in steps of 2/3: not judged
    assert three.verdict["verdict"] == "none"
    assert "3 runs are too few to judge the ranking (tau 1.00; 5 or more)" in three.verdict["text"]


def test_the_label_kinds_name_the_scales_and_the_sidecar_who_judged(tmp_path: Path) -> None:
    """A judge on TREC's 0-3 that used grades 1-3 only would be read as 1-5 from its grades; its sidecar
    says trec (and who judged, how deep), so people's 1-5 and its 0-3 are both binarized at their
    levels (>= 4 and >= 2). People's qrels declared binary are read as reference ids."""
    from ctxeval import Qrels
    from ctxeval._io.labels import LabelKind, Provenance, write_sidecar

    human = {"q": {"a": 5, "b": 2, "c": 4, "d": 1}}
    path = Path(_write(tmp_path / "j.qrels", {"q": {"a": 3, "b": 1, "c": 2, "d": 1}}))
    write_sidecar(
        path, LabelKind("judged", "trec", provenance=Provenance("openai", "m7", task="grade", depth=2, pairs=4))
    )
    card = agreement(human, str(path))
    assert card.scales["judge"]["name"] == "0-3 (TREC)"
    assert card.scales["how"] == (
        "people's 1-5 (RA-nWG) at grade >= 4 and the judge's 0-3 (TREC) at >= 2, both binarized: map one scale "
        "onto the other (--grade-map) to compare grades"
    )
    assert card.labels["kappa_binary"]["kappa"] == 1.0
    assert card.labelled_by == "task grade by openai / m7, top 2 of each list, 4 pairs judged"
    assert "(labels by task grade by openai / m7, top 2 of each list, 4 pairs judged)" in str(card).splitlines()[0]
    refs = agreement(Qrels.from_dict({"q": {"a": 1, "c": 1}}, labels="binary"), str(path))
    assert refs.scales["human"]["name"] == "reference ids (binary: relevant or unlabelled)"
    with pytest.raises(ConfigError, match=r"declared 0-3 \(TREC\) .* but hold grade\(s\) \[4, 5\]"):
        agreement(Qrels.from_dict(human, labels="trec"), str(path))


def test_a_grade_map_puts_both_sides_on_one_scale() -> None:
    """People on TREC's 0-3, the judge on 1-5. Without a map both are binarized at their levels (2 and
    4) and the card asks for a map; ``trec-dl`` (0-3 -> 2-5) covers people's grades only, so it maps
    theirs; ``judge=5:3,...`` maps the judge's onto 0-3 instead. Kappa on the mapped grades equals
    scikit-learn's."""
    from sklearn.metrics import cohen_kappa_score

    human = {"q": {"a": 3, "b": 2, "c": 0, "d": 1, "e": 0, "f": 2}}
    judge = {"q": {"a": 5, "b": 5, "c": 2, "d": 2, "e": 1, "f": 3}}
    plain = agreement(human, judge)
    assert plain.scales["common"]["name"] == "binary (relevant = 1)"
    assert "map one scale onto the other (--grade-map) to compare grades" in plain.scales["how"]
    mapped = agreement(human, judge, grade_map="trec-dl")
    assert mapped.scales["common"]["name"] == "1-5 (RA-nWG)"
    h = [{3: 5, 2: 4, 1: 3, 0: 2}[g] for g in human["q"].values()]
    assert mapped.labels["kappa"]["kappa_linear"] == pytest.approx(
        cohen_kappa_score(h, list(judge["q"].values()), labels=[1, 2, 3, 4, 5], weights="linear")
    )
    onto_trec = agreement(human, judge, grade_map="judge=5:3,4:2,3:1,2:0,1:0")
    assert onto_trec.scales["common"]["name"] == "0-3 (TREC)"
    assert onto_trec.labels["kappa_binary"]["level"] == 2
    j = [{5: 3, 4: 2, 3: 1, 2: 0, 1: 0}[g] for g in judge["q"].values()]
    assert onto_trec.labels["kappa"]["kappa"] == pytest.approx(cohen_kappa_score(list(human["q"].values()), j))
    at3 = agreement(human, judge, grade_map={"human": "trec-dl"}, level=3)
    assert at3.labels["kappa_binary"]["level"] == 3


def test_a_grade_map_onto_binary_finds_its_side_and_errors_name_the_fix() -> None:
    refs = {"q": {"a": 1, "b": 1}}
    judge = {"q": {"a": 5, "b": 2, "c": 1}}
    card = agreement(
        refs, judge, grade_map="5:1,4:1,3:0,2:0,1:0"
    )  # covers both sides; only the judge's lands on binary
    assert card.notes[0] == "grade map 5:1,4:1,3:0,2:0,1:0 applied to the judge's labels"
    assert card.labels["leniency"]["judge_rate"] == 0.5
    with pytest.raises(
        ConfigError, match=r"covers both sides' grades .* say which side it maps, --grade-map judge=MAP"
    ):
        agreement({"q": {"a": 5, "b": 2}}, {"q": {"a": 4, "b": 1}}, grade_map="1:1,2:2,3:3,4:4,5:5")
    with pytest.raises(ConfigError, match="covers neither side's grades"):
        agreement(refs, judge, grade_map="7:1")
    with pytest.raises(ConfigError, match="the side before '=' is 'human' or 'judge'"):
        agreement(refs, judge, grade_map="people=5:1")
    with pytest.raises(
        ConfigError, match=r"--level 6: on the people's scale 1-5 \(RA-nWG\) a level splits its grades in two: 2 to 5"
    ):
        agreement({"q": {"a": 5, "b": 1}}, {"q": {"a": 5, "b": 1}}, level=6)
    with pytest.raises(ConfigError, match="--level needs one scale"):
        agreement({"q": {"a": 3, "b": 0}}, {"q": {"a": 5, "b": 1}}, level=2)


def test_people_on_a_subset_of_queries_give_prediction_powered_means(tmp_path: Path) -> None:
    """People labelled 15 of 40 queries, the judge all 40: each run's PPI mean is ppi_mean over the
    per-query values evaluate gives under either labelling, with 15 labelled and 25 unlabelled."""
    import ctxeval

    human, runs = planted()
    judge = noisy(human, 0.3)
    subset = {q: human[q] for q in sorted(human)[:15]}
    paths = _write_runs(tmp_path, runs)
    card = agreement(subset, judge, paths)
    by_h = ctxeval.evaluate(subset, paths, ["nDCG@10"], policies={"missing": "zero"})
    by_j = ctxeval.evaluate(judge, paths, ["nDCG@10"], policies={"missing": "zero"})
    for rh, rj in zip(by_h.runs, by_j.runs):
        want = ppi_mean(rj.per_query("nDCG@10"), rh.per_query("nDCG@10"))
        assert card.ppi[rh.name] == want.to_dict()
        assert (want.labelled, want.unlabelled) == (15, 25)
    assert card.coverage["judge_only"] == 25 * 10
    assert "15 queries labelled by people, 25 by the judge only; PPI++ (power-tuned, leave-one-out)" in str(card)


def test_the_agreement_command_prints_the_card_and_its_json(tmp_path: Path) -> None:
    human, runs = planted(n_queries=12, seed=3)
    judge = {q: dict.fromkeys(docs, 4) for q, docs in human.items()}
    args = [
        "agreement",
        _write(tmp_path / "h.qrels", human),
        _write(tmp_path / "j.qrels", judge),
        *_write_runs(tmp_path, runs),
    ]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    # the verdict lists every failing rule, each with its threshold (issue 33: before, the first one only)
    assert lines[1].startswith(
        "verdict: do not use in place of people's labels: a degenerate judge (grade 4 for 100% of its 120 labels): "
        "its grades carry 0.00 of the information people's do, < 0.5"
    )
    for rule in ("relevant (100% >= 50%)", "binarized kappa 0.00 < 0.42", "ordinal alpha", "<= 0"):
        assert rule in lines[1]
    assert (
        "  binarized kappa >= 0.42          LLMJudge, TREC DL 2023 (Rahmani et al. 2024): 0.42-0.43; Thomas et al. 2024 (SIGIR): 0.64"
        in lines
    )
    assert "Kendall's tau undefined (a side gives every run the same value), tau_AP 0.0000" in res.stdout
    doc = json.loads(CliRunner().invoke(cli, [*args, "--format", "json"]).stdout)
    assert doc["verdict"]["verdict"] == "reject"
    assert doc["ranking"]["kendall_tau"] is None
    assert doc["thresholds"] == {"kappa_binary": 0.42, "tau": 0.83, "degenerate": 0.5, "distractors": 0.5}
    assert len(doc["verdict"]["failing"]) == 4
    bad = CliRunner().invoke(cli, [*args[:3], "--grade-map", "nonsense"])
    assert bad.exit_code == 2
    assert bad.output.startswith("ctxeval: error: grade map 'nonsense'")
