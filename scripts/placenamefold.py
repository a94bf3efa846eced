"""The folding of place names into keys, shared by build-gazetteer.py (the keys of the file's name
index) and build-fold-table.py (the table the Swift side folds queries with,
Sources/Geocoding/PlaceNameFoldTable.swift), so that both fold by one rule and one Unicode
version: Python's unicodedata.

The rule (PlaceNameKey.swift): lower case, compatibility decomposition (NFKD, Unicode Standard
Annex #15) with the nonspacing marks dropped, a few letters that do not decompose spelled out, and
every run of characters that are neither letters nor digits one space, trimmed.
"""

import unicodedata

# Letters that NFKD does not decompose, spelled out.
SPECIAL = {
    "ß": "ss", "æ": "ae", "ø": "o", "œ": "oe", "ł": "l", "đ": "d", "ð": "d", "þ": "th",
    "ı": "i", "ħ": "h", "ŋ": "n", "ŧ": "t", "ĸ": "k",
}


def fold_scalar(ch):
    """What one character of lower-cased text becomes before the runs of separators are joined:
    its compatibility decomposition without nonspacing marks, with SPECIAL's letters spelled out.
    Folding text character by character so equals folding it whole: canonical reordering moves
    only characters of non-zero combining class, which are nonspacing marks (dropped) or, for 25
    spacing marks, not letters (separators)."""
    return "".join(
        SPECIAL.get(part, part)
        for part in unicodedata.normalize("NFKD", ch)
        if unicodedata.category(part) != "Mn"
    )


def fold(text):
    """The name key: lower case, compatibility-decomposed, marks dropped, a few letters spelled
    out, every run of characters that are not letters or digits one space."""
    out = []
    for ch in unicodedata.normalize("NFKD", text.lower()):
        if unicodedata.category(ch) == "Mn":
            continue
        ch = SPECIAL.get(ch, ch)
        if all(unicodedata.category(c)[0] in "LN" for c in ch):
            out.append(ch)
        else:
            out.append(" ")
    return " ".join("".join(out).split())
