"""Filling a template for a subject (the slots are listed in
:mod:`temporal_rag_training.families`), and the rendered statement before noise."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from temporal_rag_training.subjects import Subject

_TOKEN = re.compile(r"\{(\w+)\}|\[([^\[\]|{}]*)\|([^\[\]|{}]*)\]")
_CAPITALISE = re.compile(r"[a-z][a-z']*[,:]?")
_SUBJECT_START = ("{S}", "{Sbe}", "{Shave}", "{P}", "{O}")
_ARTICLE = re.compile(r"\b([Aa]) (?=[aeio]|u(?!ni|s|ti|r))")
_DOUBLE_ARTICLE = re.compile(r"\b([Tt])he (the|an?) ")
_CONTRACTED = ("first", "we", "pronoun")  # subject kinds named by a pronoun
_GRAMMAR = frozenset({"S", "Sbe", "Shave", "s", "P", "O", "p", "o", "r", "be", "was", "have", "do"})
LEFTOVER = re.compile(r"[{}\[\]|]")  # a slot or choice the rendering left unfilled


@dataclass(frozen=True, slots=True)
class Said:
    """A rendered statement before noise."""

    text: str
    may_capitalise: bool
    template: str = ""
    anaphoric: bool = False  # names its subject with a pronoun: it cannot be said first


def render(template: str, subj: Subject, slots: Mapping[str, str]) -> tuple[str, bool]:
    """The template filled for ``subj``; and whether its first letter may be capitalised."""
    plural, first = subj.plural, subj.kind == "first"
    out: list[str] = []
    pos = 0
    for match in _TOKEN.finditer(template):
        out.append(template[pos : match.start()])
        pos = match.end()
        name = match.group(1)
        if name is None:
            out.append(match.group(2) if plural else match.group(3))
            continue
        if name not in _GRAMMAR:  # {v}, {old}, {when}, ...
            out.append(slots[name])
            continue
        if name in ("S", "Sbe", "Shave"):  # verbs after agree with the nearest subject slot
            plural, first = subj.plural, subj.kind == "first"
        elif name == "s":
            plural, first = subj.pronoun.plural, subj.pron == "i"
        out.append(_grammar(name, subj, plural, first))
    out.append(template[pos:])
    text = _ARTICLE.sub(r"\1n ", "".join(out))
    text = _DOUBLE_ARTICLE.sub(_one_article, text)
    may_capitalise = not (subj.nocap and template.startswith(_SUBJECT_START))
    return text, may_capitalise


def _grammar(name: str, subj: Subject, plural: bool, first: bool) -> str:
    """What the grammar slot ``{name}`` stands for."""
    pron = subj.pronoun
    contract = subj.kind in _CONTRACTED
    if name == "S":
        return subj.nom
    if name == "Sbe":
        return pron.be_c if contract else f"{subj.nom} is"
    if name == "Shave":
        return pron.have_c if contract else f"{subj.nom} has"
    if name == "s":
        return pron.nom
    if name == "P":
        return possessive(subj)
    if name == "O":
        return pron.obj if contract else subj.nom
    if name == "p":
        return pron.poss
    if name == "o":
        return pron.obj
    if name == "r":
        return pron.refl
    if name == "be":
        return "am" if first else "are" if plural else "is"
    if name == "was":
        return "was" if first or not plural else "were"
    if name == "have":
        return "have" if plural else "has"
    return "do" if plural else "does"  # {do}


def possessive(subj: Subject) -> str:
    """The subject's possessive: "my", "Priya's", "the Joneses'"."""
    if subj.kind in _CONTRACTED:
        return subj.pronoun.poss
    if subj.kind == "thing" and subj.nom.endswith("s"):
        return f"{subj.nom}'"
    return f"{subj.nom}'s"


def _one_article(match: re.Match[str]) -> str:
    """ "the the Netherlands" -> "the Netherlands", "The a ..." -> "A ..." """
    second = match.group(2)
    return (second.capitalize() if match.group(1) == "T" else second) + " "


def capitalise(text: str) -> str:
    """The text with its first letter upper case, unless its first word looks like a name
    ("iPhone", "checkout-api")."""
    head = text.split(" ", 1)[0]
    if _CAPITALISE.fullmatch(head):
        return text[0].upper() + text[1:]
    return text
