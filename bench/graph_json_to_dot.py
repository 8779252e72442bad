#!/usr/bin/python3
"""A graph.json layer as graphviz input, for bench/layout_vs_dot.sh: the
nodes the graph view draws (not the attached constants), as boxes of the
view's size, in nested clusters for the layout's scopes, top to bottom.

    /usr/bin/python3 bench/graph_json_to_dot.py graph.json out.dot [layer]

Prints the drawn node and cluster counts.
"""
import json
import sys


def main():
    path, out = sys.argv[1], sys.argv[2]
    layer = json.load(open(path))[sys.argv[3] if len(sys.argv) > 3 else "framework"]
    layout = layer["layout"]
    width, height = layout["node_width"] / 72, layout["node_height"] / 72
    drawn = [n for n in layer["nodes"] if "scope" in n]
    ids = {n["node_id"] for n in drawn}
    children = {}
    for s in layout["scopes"]:
        if s["parent"] >= 0:
            children.setdefault(s["parent"], []).append(s["id"])
    members = {}
    for n in drawn:
        members.setdefault(n["scope"], []).append(n["node_id"])
    lines = ["digraph g {", "  rankdir=TB;", f'  node [shape=box, fixedsize=true, width={width:.3f}, height={height:.3f}, label=""];']

    def emit(scope, indent):
        for node in members.get(scope, []):
            lines.append(f"{indent}n{node};")
        for child in children.get(scope, []):
            lines.append(f"{indent}subgraph cluster_{child} {{")
            emit(child, indent + "  ")
            lines.append(f"{indent}}}")

    emit(0, "  ")
    for v in layer["values"]:
        p = v.get("producer")
        if p in ids:
            for c in v.get("consumers", []):
                if c in ids:
                    lines.append(f"  n{p} -> n{c};")
    lines.append("}")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(len(drawn), len(layout["scopes"]) - 1)


if __name__ == "__main__":
    main()
