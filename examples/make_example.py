"""Build examples/news.jsonl: 300 short synthetic news items with planted noisy copies, labelled.

Every text is generated here from small word lists (no third-party text ships in the repository).
Each record: {"id", "text", "cluster"}; cluster is null for a document with no planted copy.
Copies are noisy the way reprints are: typos, OCR confusions, an added dateline, abridgement,
a dropped lead sentence. Also planted: template siblings (same notice, different figures and
companies), which are NOT duplicates. Deterministic: `python examples/make_example.py` rewrites
the same file.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

PLACES = ["Lisbon", "Osaka", "Nairobi", "Denver", "Hamburg", "Quito", "Perth", "Oslo", "Lagos", "Hanoi",
          "Toronto", "Seville", "Dakar", "Tbilisi", "Cebu", "Bergen", "Porto", "Kyoto", "Accra", "Lima"]
ACTORS = ["the city council", "the regional water board", "a group of local farmers", "the national rail operator",
          "the central bank", "a coalition of small retailers", "the port authority", "the ministry of health",
          "striking dock workers", "the university hospital", "a local football club", "the state power utility",
          "a consortium of shipbuilders", "the weather service", "the museum trustees", "a team of geologists"]
VERBS = ["announced", "rejected", "approved", "postponed", "questioned", "welcomed", "unveiled", "cancelled",
         "defended", "expanded", "criticised", "suspended"]
OBJECTS = ["a plan to rebuild the old harbour bridge", "new limits on night flights", "a rise in bus fares",
           "the sale of two coastal power plants", "a scheme to plant forty thousand trees",
           "an inquiry into delayed pension payments", "a ban on single-use plastic cups",
           "funding for a second cancer clinic", "the merger of three rural school districts",
           "a proposal to close the northern mine", "stricter checks on imported grain",
           "a tax break for solar panel makers", "the reopening of the central market",
           "a pilot programme of free ferry rides", "the restoration of a medieval chapel"]
REASONS = ["citing rising costs", "after months of protests", "following a heated public meeting",
           "despite objections from residents", "as winter storms approached", "amid a shortage of skilled staff",
           "after an audit found gaps in the accounts", "to meet new European rules", "after record rainfall",
           "as tourism numbers recovered"]
QUOTES = ["This is a difficult but necessary decision", "We listened to every concern that was raised",
          "Nobody expected the numbers to move this fast", "The work will start before the end of the year",
          "Our members were not consulted at all", "We expect the first results within weeks"]
PEOPLE = ["Ana Ferreira", "Kenji Watanabe", "Grace Mwangi", "Tom Keller", "Lena Brandt", "Diego Paredes",
          "Mia Sorensen", "Chidi Okafor", "Linh Tran", "Sarah Novak", "Omar Haddad", "Ines Duarte"]
ROLES = ["a spokeswoman", "the mayor", "a union leader", "the chief engineer", "a senior official", "the director"]
COMPANIES = ["Harbor Lines", "Northfield Foods", "Corvex Mining", "Bluewater Energy", "Altamira Textiles",
             "Kestrel Motors", "Pinecrest Media", "Solano Chemicals", "Greystone Bank", "Verda Pharma"]

OCR = [("rn", "m"), ("m", "rn"), ("l", "1"), ("e", "c"), ("cl", "d"), ("o", "0"), ("h", "li"), ("i", "l")]
KEYS = "qwertyuiopasdfghjklzxcvbnm"


def story(rng: random.Random) -> str:
    place, actor, verb, obj = rng.choice(PLACES), rng.choice(ACTORS), rng.choice(VERBS), rng.choice(OBJECTS)
    who, role = rng.choice(PEOPLE), rng.choice(ROLES)
    n1, n2 = rng.randint(2, 98), rng.randint(100, 9000)
    sentences = [
        f"{actor.capitalize()} in {place} {verb} {obj} on {rng.choice(['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'])}, {rng.choice(REASONS)}.",
        f"The decision affects about {n2} households and will cost {n1} million euros over {rng.randint(2, 9)} years.",
        f"\"{rng.choice(QUOTES)},\" said {who}, {role}.",
        f"Critics said the {rng.choice(['timing', 'budget', 'process', 'consultation'])} was {rng.choice(['rushed', 'unclear', 'unfair', 'too slow'])} and asked for a {rng.choice(['review', 'vote', 'delay', 'public hearing'])}.",
        f"A final {rng.choice(['report', 'decision', 'vote', 'ruling'])} is expected in {rng.choice(['March', 'June', 'September', 'November'])}, {rng.choice(PEOPLE)} told reporters.",
    ]
    rng.shuffle(sentences[1:4])
    return " ".join(sentences[: rng.randint(3, 5)])


def notice(rng: random.Random, company: str) -> str:
    q = rng.choice(["1st", "2nd", "3rd", "4th"])
    return (f"{company.upper()} {q} QTR NET. Shr {rng.randint(5, 99)} cts vs {rng.randint(5, 99)} cts. "
            f"Net {rng.randint(100, 999)},{rng.randint(100, 999)} vs {rng.randint(100, 999)},{rng.randint(100, 999)}. "
            f"Revs {rng.randint(2, 90)}.{rng.randint(0, 9)} mln vs {rng.randint(2, 90)}.{rng.randint(0, 9)} mln.")


def typos(text: str, rng: random.Random, rate: float) -> str:
    out = []
    for ch in text:
        r = rng.random()
        if ch.isalpha() and r < rate:
            op = rng.randrange(3)
            if op == 0:
                continue
            if op == 1:
                out.append(rng.choice(KEYS))
                continue
            out.append(ch + rng.choice(KEYS))
            continue
        out.append(ch)
    return "".join(out)


def ocr(text: str, rng: random.Random, rate: float) -> str:
    for a, b in OCR:
        parts = text.split(a)
        text = parts[0] + "".join((b if rng.random() < rate else a) + p for p in parts[1:])
    return text


def noisy_copy(text: str, rng: random.Random) -> str:
    kind = rng.choice(["typos", "ocr", "dateline", "abridge", "lead", "mixed"])
    sentences = text.split(". ")
    if kind == "typos":
        return typos(text, rng, 0.03)
    if kind == "ocr":
        return ocr(text, rng, 0.15)
    if kind == "dateline":
        return f"{rng.choice(PLACES).upper()}, {rng.choice(['May', 'June'])} {rng.randint(1, 28)} (Wire) - " + text
    if kind == "abridge" and len(sentences) > 2:
        return ". ".join(sentences[: len(sentences) - 1]) + "."
    if kind == "lead" and len(sentences) > 2:
        return ". ".join(sentences[1:])
    return typos(ocr(text, rng, 0.05), rng, 0.01).upper() if rng.random() < 0.3 else typos(ocr(text, rng, 0.05), rng, 0.01)


def build(n_originals: int = 200, seed: int = 7) -> list[dict[str, object]]:
    rng = random.Random(seed)
    records: list[dict[str, object]] = []
    seen: set[str] = set()
    k = 0
    while k < n_originals:
        text = story(rng)
        if text in seen:
            continue
        seen.add(text)
        k += 1
        copies = rng.choices([0, 1, 2, 4], weights=[70, 18, 8, 4])[0]
        cluster = f"c{k}" if copies else None
        records.append({"id": f"n{k}", "text": text, "cluster": cluster})
        for j in range(copies):
            records.append({"id": f"n{k}-{j + 1}", "text": noisy_copy(text, rng), "cluster": cluster})
    for i, company in enumerate(COMPANIES):  # template siblings: same notice form, different facts
        records.append({"id": f"t{i}", "text": notice(rng, company), "cluster": None})
    rng.shuffle(records)
    return records


def main() -> None:
    out = Path(__file__).with_name("news.jsonl")
    records = build()
    with open(out, "w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    n_dup = sum(1 for r in records if r["cluster"] is not None)
    print(f"wrote {len(records)} documents ({n_dup} in planted clusters) to {out}")


if __name__ == "__main__":
    main()
