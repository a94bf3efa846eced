#!/usr/bin/env python3
"""Writes Data/hot-path.order: the functions a fix runs through, in the order the linker lays them.

    scripts/hot-path-order.py --calls N --map LINK.map OUT CALLGRIND.OUT...

(scripts/hot-path-profile.sh makes the inputs and runs this; docs/performance.md, "Latency",
says why.)

Each input is a `valgrind --tool=callgrind` profile of one process (locationd, or an app reading
a source or the daemon) that handled a known number of epochs. A function is on the hot path when
it was called at least N times (N about the number of epochs: once per fix or more); the link map
of a release build (`-Xlinker -Map=`) gives the input section each symbol lies in, and a symbol
whose section holds more than 16 KiB (the Swift runtime's monolithic `.text` parts, a source
file's private functions when they are not in sections of their own) is left out, since naming it
would move the whole section to the front; so is a name the map shows defined more than once (a
local helper of many objects), and one it does not show (a function of no installed program).

The order is Pettis and Hansen's procedure positioning ("Profile Guided Code Positioning",
K. Pettis and R. C. Hansen, PLDI 1990, section 4): the call graph's edges weighted by their call
counts, the two chains joined by the heaviest remaining edge are merged, in the orientation that
puts that edge's two functions nearest each other, until no edge is left; the chains are then
written hottest first. Simplified: the edges are taken in the order of their own weights, not
summed again between merged chains. The linker (`ld.lld --symbol-ordering-file`, the Makefile's
`LAYOUT`) places the named functions first in `.text`, so that the few hundred a fix runs share a
few dozen pages instead of being spread over the whole program: after an idle period each page's
first use costs a page walk (on a virtual machine, a nested one).

Nothing is copied from any implementation; the input format is callgrind's documented one
("Callgrind Format Specification", valgrind's manual).
"""

import argparse
import collections
import re
import sys

NAME = re.compile(r"^(c?)(fn|ob|fl|fi|fe|cfi|cfl)=\((\d+)\)(?: (.*))?$")
# Names a linker can be given: mangled Swift symbols and C identifiers (callgrind writes C++
# functions demangled, which the ordering file cannot name).
SYMBOL = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$.]*$")
LARGEST_SECTION = 16 * 1024


def read_profile(path, calls, edges):
    """Adds one callgrind file's call counts (per callee) and edges (per caller and callee)."""
    names = {}
    function = None
    callee = None
    pending = None
    with open(path, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            line = line.rstrip("\n")
            match = NAME.match(line)
            if match:
                prefix, kind, number, text = match.groups()
                if kind != "fn":
                    continue
                if text:
                    names[number] = re.sub(r"'\d+$", "", text)
                if prefix:
                    callee = names.get(number)
                else:
                    function = names.get(number)
                continue
            if line.startswith("calls="):
                pending = int(line[6:].split()[0])
                continue
            if pending is not None:
                # The cost line after `calls=`: the call's position and inclusive cost.
                if function and callee:
                    calls[callee] += pending
                    if function != callee:
                        edges[tuple(sorted((function, callee)))] += pending
                pending = None


def section_sizes(map_path):
    """Each symbol in `.text` of an ld.lld link map, with the size of its input section.

    The map's lines are `VMA LMA Size Align` and then, indented by one, nine or seventeen spaces,
    an output section, an input section (`file:(name)`) or a symbol.
    """
    line_shape = re.compile(r"^\s*\S+\s+\S+\s+([0-9a-fA-F]+)\s+\S+( +)(.*)$")
    sizes = {}
    in_text = False
    current = None
    with open(map_path, encoding="utf-8", errors="replace") as lines:
        next(lines, None)
        for line in lines:
            match = line_shape.match(line.rstrip("\n"))
            if not match:
                continue
            size, indent, rest = int(match.group(1), 16), len(match.group(2)), match.group(3)
            if indent < 9:
                in_text = rest == ".text"
                current = None
            elif indent < 17:
                current = size if in_text else None
            elif current is not None:
                # A name defined more than once (a local helper, `block_copy_helper`, a merged
                # thunk in many objects) would pull every section that defines it: left out.
                sizes[rest] = current if rest not in sizes else LARGEST_SECTION + 1
    return sizes


def pettis_hansen(hot, edges):
    """Chains of `hot` functions merged along the heaviest edges first (Pettis and Hansen, 4.1)."""
    chain_of = {name: [name] for name in hot}
    weight = collections.defaultdict(int)
    for (a, b), count in edges.items():
        if a in chain_of and b in chain_of:
            weight[(a, b)] += count
    for (a, b), _ in sorted(weight.items(), key=lambda item: (-item[1], item[0])):
        first, second = chain_of[a], chain_of[b]
        if first is second:
            continue
        # The orientation that brings a and b closest: try the four ways of joining the chains.
        candidates = []
        for left in (first, first[::-1]):
            for right in (second, second[::-1]):
                joined = left + right
                candidates.append((abs(joined.index(a) - joined.index(b)), joined))
        merged = min(candidates, key=lambda candidate: candidate[0])[1]
        for name in merged:
            chain_of[name] = merged
    chains = []
    seen = set()
    for name in hot:
        chain = chain_of[name]
        if id(chain) not in seen:
            seen.add(id(chain))
            chains.append(chain)
    return chains


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, required=True, help="calls that make a function hot")
    parser.add_argument("--map", required=True, help="ld.lld link map of a release build")
    parser.add_argument("output")
    parser.add_argument("profiles", nargs="+")
    arguments = parser.parse_args()

    calls = collections.defaultdict(int)
    edges = collections.defaultdict(int)
    for path in arguments.profiles:
        per_file = collections.defaultdict(int)
        read_profile(path, per_file, edges)
        # A function is hot in a process when that process called it often enough.
        for name, count in per_file.items():
            calls[name] = max(calls[name], count)
    sizes = section_sizes(arguments.map)
    hot = [
        name
        for name, count in sorted(calls.items(), key=lambda item: (-item[1], item[0]))
        if count >= arguments.calls
        and SYMBOL.match(name)
        and sizes.get(name, LARGEST_SECTION + 1) <= LARGEST_SECTION
    ]
    chains = pettis_hansen(hot, edges)
    heat = {id(chain): sum(calls[name] for name in chain) for chain in chains}
    chains.sort(key=lambda chain: -heat[id(chain)])
    with open(arguments.output, "w", encoding="utf-8") as output:
        output.write(
            "# The hot path's functions for ld.lld --symbol-ordering-file (Makefile, LAYOUT).\n"
            "# Made by scripts/hot-path-profile.sh; do not edit.\n")
        for chain in chains:
            for name in chain:
                output.write(name + "\n")
    total = sum(sizes.get(name, 0) for name in hot)
    sys.stderr.write(
        f"{len(hot)} functions ({total} bytes) in {len(chains)} chains -> {arguments.output}\n")


if __name__ == "__main__":
    main()
