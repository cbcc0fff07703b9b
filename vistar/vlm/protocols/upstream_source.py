"""The benchmarks' own judge code, read from an upstream checkout the user has (never shipped with vistar).

Each benchmark's pieces — a prompt constant, a message-building or answer-parsing function — are found in
the upstream .py file by parsing it (`ast`; the file is never imported, so its heavy imports are not
needed), and each piece's source text must match the sha256 pinned here for the benchmark's commit: an
edited or other version of the file is refused with the piece and file named. Only a matching function is
then compiled, in a namespace holding just the modules it uses.
"""
from __future__ import annotations

import ast
import hashlib
import subprocess
from dataclasses import dataclass
from pathlib import Path


class UpstreamError(ValueError):
    """The upstream checkout is missing, incomplete or not the pinned version."""


@dataclass(frozen=True)
class Upstream:
    name: str            # folder name, e.g. "WISE"
    repo: str            # git URL
    commit: str
    pins: dict           # (file, piece) -> sha256 of the piece's source text

    @property
    def label(self) -> str:
        return f"upstream {self.name}@{self.commit[:7]}"


UPSTREAMS = {
    "WISE": Upstream("WISE", "https://github.com/PKU-YuanGroup/WISE", "eb51174483a5de2e34e8614cf9dfb3319ee7fcd0", {
        ("vllm_eval.py", "build_evaluation_messages"): "aa455079316237566e62c9a2c2785a9e2481b9ee54d0a090475bb95522272f2b",
        ("vllm_eval.py", "extract_scores"): "e430ea1cef07aa4154364f5f50f89523844800b42735a53745b4dc30b4d58a50",
        ("vllm_eval.py", "_chat_completion_via_vllm"): "93e4bd60ebde70e7608d5d2d136218338cce21ab1ec6b3f3c66374f58dcdce6b",
        ("WISE_legacy/gpt_eval.py", "build_evaluation_messages"): "59b18e5bf9b0a34c524f176de3d0ad1bfe5987d03cfe15dd0ae4cf754ad13a49",
        ("WISE_legacy/gpt_eval.py", "extract_scores"): "b116d1671c1efddbba5fa1382baccd72342eb8e652e0cea69ab5b9d1eb4d9143",
        ("WISE_legacy/gpt_eval.py", "evaluate_image"): "d53e4a8485f34e93f18d949762b85889d57ba7f194740ac26d77553bdb05e890",
    }),
    "GenExam": Upstream("GenExam", "https://github.com/OpenGVLab/GenExam", "6f324dd1ca23511759a409aa28783075db68bf99", {
        ("eval_prompt.py", "prompt_for_eval"): "a7649b0ecad290e646223789bb1db8e90c8e8ee6014057107da971d58e6c137e",
        ("run_eval.py", "encode_image"): "4d73a01816e7782708f840db50dd0846821f34c389236d03e4bd4f7966767e29",
        ("run_eval.py", "call_gpt5"): "88052bbf5014002017c1e780fb420109eacd3631ace46005925c9673367b27cb",
        ("run_eval.py", "eval_single"): "872c6d114491f7da513606259ec627a661ae7d49a99f09bb465de0a2ce0bd4d8",
    }),
    "UniEval": Upstream("UniEval", "https://github.com/xmed-lab/UniEval", "45e7cb501e0585530fae146e17dd5e8fb0777b3a", {
        ("uni_eval.py", "check_answer"): "c235d0ebcc53660e738e2dc1b042c1b63d6ff07d68afe6b8ff6e08bb3f4113ea",
        ("uni_eval.py", "uni_eval"): "f511a8f1e533344f83d9339681558060348ab04d43773ac71b3e894eab326a27",
    }),
    "PhyBench": Upstream("PhyBench", "https://github.com/OpenGVLab/PhyBench", "1e3865f46ede621190061aa9d44da963ec7441c7", {
        ("GPT_make_grading.py", "process_data"): "0e168fb58bf15b2f32f1e4072e59f8ec45817568aefbf8e82bd862864356d94b",
        ("GPT_make_eval.py", "task"): "8bbf59159ee239395646e2e470331b55fd7f3d7e333386f07f5dae05fe8e8616",
        ("GPT_make_eval.py", "answer"): "bd4c8ebe1c98822634e4552d9e4cd13dc2c67c346ef32bfe1f49f8e896c55954",
        ("GPT_make_eval.py", "process_data"): "21b641a14292801d6043705e8a4c79b4abb93c124d7261c915565cc63eafc866",
    }),
}


def checkout(name: str, folder: str | Path) -> Path:
    """The folder holding benchmark `name`'s upstream files: `folder` itself, or `folder/upstream`,
    `folder/<name>` or `folder/<name>/upstream` (a benchmark's data folder, or a root holding several)."""
    up = UPSTREAMS[name]
    first = next(iter(up.pins))[0]
    root = Path(folder).expanduser()
    for candidate in (root, root / "upstream", root / name, root / name / "upstream"):
        if (candidate / first).is_file():
            return candidate
    raise UpstreamError(f"{root}: no {name} upstream checkout here ({first} not found in it, in upstream/, {name}/ "
                        f"or {name}/upstream/); fetch it with `vistar upstream fetch {name}`")


def piece_source(path: Path, piece: str) -> str:
    """Source text of the top-level function or assignment `piece` in `path` (found by parsing, not importing)."""
    try:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text)
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        raise UpstreamError(f"{path}: cannot read it as Python: {exc}") from None
    for node in tree.body:
        names = [node.name] if isinstance(node, ast.FunctionDef) else [
            t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
        if piece in names:
            return ast.get_source_segment(text, node)
    raise UpstreamError(f"{path}: '{piece}' not found; this is not the pinned upstream file")


def verified_source(name: str, folder: str | Path, file: str, piece: str) -> str:
    """The piece's source, refused unless its sha256 is the one pinned for the benchmark's commit."""
    up = UPSTREAMS[name]
    path = checkout(name, folder) / file
    source = piece_source(path, piece)
    digest = hashlib.sha256(source.encode()).hexdigest()
    if digest != up.pins[(file, piece)]:
        raise UpstreamError(f"{path}: '{piece}' differs from {name} at commit {up.commit[:7]} (sha256 {digest[:12]}…, "
                            f"pinned {up.pins[(file, piece)][:12]}…); the judge messages would not be the benchmark's. "
                            f"Use a checkout of that commit (`vistar upstream fetch {name}`)")
    return source


def constant(name: str, folder: str | Path, file: str, piece: str):
    """A pinned top-level constant (e.g. a prompt template), evaluated as a literal."""
    source = verified_source(name, folder, file, piece)
    return ast.literal_eval(ast.parse(source).body[0].value)


def function(name: str, folder: str | Path, file: str, piece: str, namespace: dict):
    """A pinned top-level function, compiled alone in `namespace` (the modules it uses)."""
    source = verified_source(name, folder, file, piece)
    scope = dict(namespace)
    exec(compile(source, f"{checkout(name, folder) / file}:{piece}", "exec"), scope)  # noqa: S102 - pinned by sha256
    return scope[piece]


def inner_assignment(name: str, folder: str | Path, file: str, function_name: str, variable: str) -> ast.expr:
    """The expression assigned to `variable` inside the pinned function `function_name` (its text is covered by
    the function's pin)."""
    source = verified_source(name, folder, file, function_name)
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == variable for t in node.targets):
            return node.value
    raise UpstreamError(f"{file}: '{variable}' is not assigned in {function_name}")


def default_dest(name: str) -> Path:
    """Where `vistar upstream fetch NAME` puts the checkout: $VISTAR_HOME/upstream/NAME."""
    from ...models.catalog import vistar_home

    return vistar_home() / "upstream" / name


def fetch(name: str, dest: Path) -> Path:
    """Clone the benchmark's repository at its pinned commit into `dest` and check every pinned piece."""
    up = UPSTREAMS[name]
    if not (dest / ".git").is_dir():
        dest.parent.mkdir(parents=True, exist_ok=True)
        _git("clone", "--quiet", "--no-checkout", up.repo, str(dest))
    _git("-C", str(dest), "checkout", "--quiet", "--detach", up.commit)
    for file, piece in up.pins:
        verified_source(name, dest, file, piece)
    return dest


def _git(*args: str) -> None:
    try:
        done = subprocess.run(["git", *args], capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UpstreamError(f"git {' '.join(args)}: {exc}") from None
    if done.returncode:
        raise UpstreamError(f"git {' '.join(args)} failed: {done.stderr.strip() or done.stdout.strip()}")
