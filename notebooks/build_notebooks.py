#!/usr/bin/env python3
"""Write the example notebooks in this folder from the cells below, without outputs.

Usage:
    python notebooks/build_notebooks.py
    python notebooks/build_notebooks.py --execute out/notebooks

``--execute FOLDER`` also runs every notebook headless, top to bottom, in a kernel of this interpreter
and saves the executed copies, outputs included, in FOLDER (``make notebooks`` does this with the
``notebooks`` extra only). It fails when a cell raises, writes to stderr (a warning, a text progress
bar) or shows a warning, except the one note a chart gives where no installed font has some of its
letters (``make notebooks`` installs the Noto fonts where it can).

The notebooks are generated so that they can be reviewed as code. They use only the public API
(``import memvelope_tools as mv``) and the bundled samples, and ``make test`` runs each one top to
bottom (tests/test_notebooks.py). Edit the cells here, then rerun this script.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from memvelope_tools._charts import NO_FONT

HERE = Path(__file__).resolve().parent

# Facts IR documents ship next to the sample exports, inside the package.
BUNDLED_FACTS = '''from importlib.resources import files

samples = files("memvelope_tools.samples")
facts_docs = {name: mv.read(samples / f"facts-{name}.mv.json") for name in ("chatgpt", "claude")}
facts = mv.facts_frame(list(facts_docs.values()), sources=list(facts_docs))'''

NOTEBOOKS: dict[str, list[tuple[str, str]]] = {
    "01-convert-and-explore.ipynb": [
        ("md", """# Convert and explore

This notebook converts the two bundled sample exports (one ChatGPT, one Claude: an invented persona's
conversations over two years) into Memvelope envelopes, looks at them as pandas frames, writes a Parquet
dataset and queries it with DuckDB. Swap `mv.sample_path(...)` for the path of your own export zip to do
the same with your history; nothing leaves your machine."""),
        ("code", """import tempfile
from pathlib import Path

import duckdb
import memvelope_tools as mv"""),
        ("md", """## Convert

`mv.convert` reads the export zip in memory and returns the envelope as plain dicts: `meta` says which
provider it came from and how many conversations and messages it holds."""),
        ("code", """envelopes = {name: mv.convert(mv.sample_path(name)) for name in ("chatgpt", "claude")}
{name: env["meta"] for name, env in envelopes.items()}"""),
        ("code", """first = envelopes["claude"]["conversations"][0]
first["title"], first["created_at"], first["messages"][0]"""),
        ("md", """## Frames

One row per conversation and one per message. Timestamps are `datetime64[ms, UTC]`, `role` is a
categorical, text is a string dtype; the `source` column tells the two exports apart."""),
        ("code", """convs = mv.conversations_frame(list(envelopes.values()), sources=list(envelopes))
msgs = mv.messages_frame(list(envelopes.values()), sources=list(envelopes))
convs.head()"""),
        ("code", "msgs.dtypes"),
        ("code", """msgs.groupby(["source", "role"], observed=True).agg(messages=("text", "size"),
                                                  words=("words", "sum"))"""),
        ("md", "The longest conversations, and when they started:"),
        ("code", """convs.nlargest(5, "n_messages")[["source", "title", "n_messages", "chars", "first_ts"]]"""),
        ("md", """## Parquet and DuckDB

`mv.to_parquet` writes `conversations.parquet` and `messages.parquet` with explicit Arrow schemas; any
Parquet reader can use the folder as it is. Here DuckDB counts messages per month and role, straight
from the files."""),
        ("code", """folder = Path(tempfile.mkdtemp()) / "history"
written = mv.to_parquet(list(envelopes.values()), folder, sources=list(envelopes))
sorted(path.name for path in written.values())"""),
        ("code", """messages_file = (folder / "messages.parquet").as_posix()
duckdb.sql(f\"\"\"
    SELECT source, date_trunc('month', ts) AS month, role, count(*) AS messages
    FROM read_parquet('{messages_file}')
    GROUP BY ALL ORDER BY source, month, role
\"\"\").df().head(10)"""),
        ("md", "Reading the folder back gives the same frames, dtypes included:"),
        ("code", """back = mv.read_parquet(folder)
assert back["messages"].equals(msgs) and back["conversations"].equals(convs)
back["messages"].dtypes.equals(msgs.dtypes)"""),
    ],
    "02-activity-timeline.ipynb": [
        ("md", """# Activity over time

When did the conversations happen, who wrote more, and at what time of day? The charts below are
drawn from the two bundled sample exports with `mv.plot`; each function draws into the Axes you give
it and returns it."""),
        ("code", """import matplotlib.pyplot as plt
import memvelope_tools as mv

envelopes = [mv.convert(mv.sample_path(name)) for name in ("chatgpt", "claude")]
msgs = mv.messages_frame(envelopes, sources=["chatgpt", "claude"])
convs = mv.conversations_frame(envelopes, sources=["chatgpt", "claude"])
len(convs), len(msgs)"""),
        ("md", """## Messages per month

Bars are messages per month, user and assistant stacked; the line (right axis) counts the conversations
active in each month. Gaps are months without any conversation."""),
        ("code", """fig, ax = plt.subplots(figsize=(9, 4), layout="constrained")
mv.plot.activity_timeline(msgs, ax=ax, freq="month");"""),
        ("md", """The same by week, for the ChatGPT export only. Weeks start on Monday in the time zone you pass;
the data themselves stay UTC."""),
        ("code", """fig, ax = plt.subplots(figsize=(9, 4), layout="constrained")
mv.plot.activity_timeline(msgs[msgs["source"] == "chatgpt"], ax=ax, freq="week", tz="Europe/Lisbon");"""),
        ("md", """## Weekday by hour

Each cell counts messages sent in that hour of that weekday, on the wall clock of `tz`. Shifting the time
zone moves the cells, not the data: compare UTC with New York."""),
        ("code", """fig, (left, right) = plt.subplots(1, 2, figsize=(13, 3.8), layout="constrained")
mv.plot.activity_heatmap(msgs, ax=left, tz="UTC")
mv.plot.activity_heatmap(msgs, ax=right, tz="America/New_York");"""),
        ("md", """## How long are conversations?

Most conversations are short; a few run long. The x axis turns logarithmic when the longest conversation
is ten times the median or more."""),
        ("code", """fig, ax = plt.subplots(figsize=(8, 3.8), layout="constrained")
mv.plot.conversation_lengths(convs, ax=ax);"""),
    ],
    "03-fact-categories.ipynb": [
        ("md", """# What the facts are about

A Facts IR document (`memvelope-ir-v0`) is a distilled list of durable facts: who each one is about
(`subject`, `subject_type`), a category, and the date it is dated to. The package ships one per sample
export, made by the zero-LLM structured distiller."""),
        ("code", "import matplotlib.pyplot as plt\nimport memvelope_tools as mv\n\n" + BUNDLED_FACTS
         + "\nfacts.head()"),
        ("code", """facts.groupby(["source", "category"], observed=False).size().unstack("source")"""),
        ("md", """## Facts per category

One bar per category in the spec's list (empty ones included), the most frequent on top; facts without a
category are counted as `uncategorised`. Split by `subject_type` to see how much is about the user
themself and how much about other people, companies and projects."""),
        ("code", """fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4), layout="constrained")
mv.plot.fact_categories(facts, ax=left)
mv.plot.fact_categories(facts, ax=right, hue="subject_type");"""),
        ("md", """Or compare the two exports directly:"""),
        ("code", """fig, ax = plt.subplots(figsize=(7, 4), layout="constrained")
mv.plot.fact_categories(facts, ax=ax, hue="source");"""),
        ("md", """## Facts over time

`effective_date` is a year, a month or a day: a date the text states, else the source conversation's
date. Per year every dated fact counts; per month, facts dated only to a year are left out, and the title
says how many."""),
        ("code", """fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4), layout="constrained")
mv.plot.facts_over_time(facts, ax=left, freq="year")
mv.plot.facts_over_time(facts, ax=right, freq="month");"""),
    ],
    "04-archetype.ipynb": [
        ("md", """# The archetype at a glance

Every Facts IR document carries an `archetype`: a few figures computed from its facts alone. `self_ratio`
is the share of facts about the user, `belief_ratio` the share that are preferences or identity,
`distinct_entities` the number of other people, companies and projects, and `style` a one-line reading
of those figures."""),
        ("code", "import matplotlib.pyplot as plt\nimport memvelope_tools as mv\n\n" + BUNDLED_FACTS
         + "\n{name: doc[\"archetype\"] for name, doc in facts_docs.items()}"),
        ("md", """## One document

The style is the title; bars are shares of all facts (self ratio, belief ratio, then each category)."""),
        ("code", """fig, ax = plt.subplots(figsize=(8, 4), layout="constrained")
mv.plot.archetype_chart(facts_docs["chatgpt"], ax=ax);"""),
        ("md", """## Side by side

Pass several documents (a list, or a dict of labels to documents) to compare them: here the two bundled
exports."""),
        ("code", """fig, ax = plt.subplots(figsize=(8, 5), layout="constrained")
mv.plot.archetype_chart(facts_docs, ax=ax);"""),
        ("md", """## Distil your own

The archetype is recomputed from whatever facts you have. Here the structured distiller (no model, no
network) reads the Claude sample envelope again, and `compute_archetype` summarises a subset: only the
facts about the user."""),
        ("code", """envelope = mv.convert(mv.sample_path("claude"))
fresh = mv.distill_structured(envelope)
about_me = [f for f in fresh["facts"] if f["subject"] == "self"]
fresh["meta"]["facts"], mv.compute_archetype(about_me)"""),
        ("code", """fig, ax = plt.subplots(figsize=(8, 5), layout="constrained")
mv.plot.archetype_chart({"distilled now": fresh, "only about the user": mv.compute_archetype(about_me)}, ax=ax);"""),
    ],
    "05-topics-and-search.ipynb": [
        ("md", """# Topics and search

Two questions people bring to their own history: *what have I been talking about, and how has that
changed?* and *where was that conversation about X?* `mv.topics` answers the first (TF-IDF and NMF from
scikit-learn, offline and deterministic), `mv.search` the second (full-text search with the Tantivy
engine, ranked by BM25). Both take the same inputs as the frame functions, a messages frame, or a
Parquet folder."""),
        ("code", """import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import memvelope_tools as mv

envelopes = [mv.convert(mv.sample_path(name)) for name in ("chatgpt", "claude")]
msgs = mv.messages_frame(envelopes, sources=["chatgpt", "claude"])
len(msgs)"""),
        ("md", """## Search

Words match whole, in any order, whatever their case and accents; the snippet marks each match between
⟦ and ⟧. The best match comes first (`score`, higher is better)."""),
        ("code", """mv.search(envelopes, "kafka lag")[["title", "role", "ts", "snippet", "score"]]"""),
        ("md", """`"a phrase"`, a `prefix*`, and `AND` / `OR` / `NOT` in capitals; `role`, `since` and `until`
narrow the results (`until` is exclusive)."""),
        ("code", """mv.search(envelopes, '"half marathon" OR pace*', role="user", since="2025-01-01", limit=5)[
    ["title", "ts", "snippet"]
]"""),
        ("code", """mv.search(envelopes, "(pandas OR polars) NOT spark", limit=5)[["title", "snippet"]]"""),
        ("md", """A query that cannot run is one clear error saying why:"""),
        ("code", """try:
    mv.search(envelopes, "pandas AND")
except mv.QueryError as exc:
    print(exc)"""),
        ("md", """The index is built once and reused. For a Parquet folder it is kept on disk in the folder
(`search-index/`) with a fingerprint of the files: when they change, the next search rebuilds it and says so."""),
        ("code", """folder = Path(tempfile.mkdtemp()) / "history"
mv.to_parquet(envelopes, folder, sources=["chatgpt", "claude"])
hits = mv.search(folder, "olive oil")
sorted(p.name for p in folder.iterdir()), hits[["source", "title"]].head(3)"""),
        ("md", """## Topics

Each conversation (its title and messages, without code, URLs, numbers and stop words) is one document.
Topics are numbered by size and labelled by their top three terms."""),
        ("code", """topics = mv.topics(msgs, n_topics=8, seed=0)
topics.labels"""),
        ("code", """fig = plt.figure(figsize=(12, 5), layout="constrained")
mv.plot.topic_terms(topics, fig=fig, n_terms=6);"""),
        ("md", """Each conversation's main topic and how sure the model is (`weight`, its share of that
conversation):"""),
        ("code", """topics.assignments[["source", "title", "label", "weight"]].head(10)"""),
        ("md", """How the mix changed: each topic's share of the conversations of each quarter."""),
        ("code", """topics.over_time("quarter").round(2)"""),
        ("code", """fig, ax = plt.subplots(figsize=(10, 4), layout="constrained")
mv.plot.topics_over_time(topics, ax=ax, freq="quarter");"""),
        ("md", """The same input and seed always give the same topics:"""),
        ("code", """again = mv.topics(msgs, n_topics=8, seed=0)
again.terms.equals(topics.terms) and again.assignments.equals(topics.assignments)"""),
    ],
}

NOTEBOOKS["06-history-across-exports.ipynb"] = [
    ("md", """# Your history across exports

People export more than once: a backup every few months, one before deleting chats, one before closing
an account. Each download is a full snapshot, and between two of them conversations are started,
continued, edited (an edited prompt or a regenerated reply moves the active path) and deleted.

This notebook walks through two bundled exports of one ChatGPT account, months apart. Swap the paths for
your own downloads to see your history; nothing leaves your machine."""),
    ("code", """import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import memvelope_tools as mv

older, newer = mv.history_samples()
older.name, newer.name"""),
    ("md", """## What changed between two exports

`mv.diff` gives one row per conversation: `new`, `missing` (deleted or archived upstream), `unchanged`,
`grown` (the newer export holds every message of the older one, then more) or `edited` (they share a
beginning and then differ), and `first_difference`, the index of the first message that differs.
Conversations match by id; messages compare by role, text and timestamp."""),
    ("code", """changes = mv.diff(older, newer)
changes["status"].value_counts()"""),
    ("code", """changes[changes["status"] != "unchanged"][
    ["title", "status", "messages_before", "messages_after", "first_difference"]
]"""),
    ("md", """## The merged history

`mv.history` merges dated exports into the usual frames, keeping every conversation and message ever seen,
each with `first_seen`, `last_seen` (the export dates) and a `status`: `current`, `edited-away` (an edit
took it off the active path) or `deleted-upstream`. The dates here come from the download names;
`date_source` says so."""),
    ("code", """h = mv.history([older, newer])
h["snapshots"][["date", "date_source", "conversations", "messages", "new", "grown", "edited", "missing"]]"""),
    ("code", """h["messages"]["status"].value_counts()"""),
    ("md", """The messages the newer export no longer has, with the last export that held them:"""),
    ("code", """gone = h["messages"][h["messages"]["status"] != "current"]
gone[["conversation_id", "position", "role", "text", "last_seen", "status"]]"""),
    ("code", """fig, ax = plt.subplots(figsize=(7, 3.5), layout="constrained")
mv.plot.history_changes(h, ax=ax);"""),
    ("md", """## A history folder that grows

`mv.add_to_history` (or `memvelope history add EXPORT --to FOLDER`) keeps the history as a Parquet folder:
add each new download, oldest first. Adding the same export again writes nothing."""),
    ("code", """folder = Path(tempfile.mkdtemp()) / "my-history"
for export in (older, newer):
    print(mv.add_to_history(export, folder)["added"])
mv.add_to_history(newer, folder)["added"]"""),
    ("md", """The folder is a Parquet folder: `conversations.parquet` as `mv.to_parquet` writes it with the history's
columns added, and the messages in `messages/`, one part per add holding the messages it saw first.
`mv.read_parquet`, `mv.read_history`, `mv.search`, `mv.topics` and `memvelope report` take it. Search
still finds the gift ideas that an edited prompt replaced, and says that the provider's latest export no
longer has them:"""),
    ("code", """mv.search(folder, "candle")[["title", "role", "snippet", "status"]]"""),
    ("code", """mv.read_history(folder)["conversations"].query("status == 'deleted-upstream'")[
    ["title", "n_messages", "first_seen", "last_seen"]
]"""),
]


# What the provider remembered about the user, read from the export itself.
NOTEBOOKS["07-what-the-ai-remembers.ipynb"] = [
    ("md", """# What the AI remembers about you

Besides the conversations, an export holds what the provider itself remembered: ChatGPT's saved memories
(an assistant message to its `bio` tool), the memory snapshots the model was shown, your custom
instructions and each change to them; Claude's account and project memory (`memories.json`).
`mv.memory_frame` reads them from the export, dated and traced to the conversation they came from.
Swap `mv.sample_path(...)` for your own export zip."""),
    ("code", """import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import memvelope_tools as mv

chatgpt = mv.sample_path("chatgpt")
memory = mv.memory_frame(chatgpt)
memory[["ts", "kind", "text", "count", "version", "current", "message_id"]]"""),
    ("md", """A memory write is an assistant message, so the envelope keeps it when it is on the active path:
`message_id` is its id there. One write sits on an edited-away branch, as real exports show them; the
snapshots of later conversations list it all the same. `preceding_user_message` is what you had just
written:"""),
    ("code", """saved = memory[memory["kind"] == "saved"]
saved[["text", "on_active_path", "message_id", "preceding_user_message"]]"""),
    ("code", """fig, ax = plt.subplots(figsize=(10, 3.5), layout="constrained")
mv.plot.memory_timeline(memory, ax=ax);"""),
    ("md", """Claude keeps one account memory and one per project, undated:"""),
    ("code", """claude = mv.memory_frame(mv.sample_path("claude"))
claude[["kind", "project_id", "text"]]"""),
    ("md", """## Memory against what you said

Given facts distilled from the same history, each memory is matched with the facts that support it
(same conversation, or shared words); `traced` says whether anything you said holds it, and
`superseded_by` what replaced it: a later version, or a later fact that says otherwise."""),
    ("code", """facts = mv.distill_structured(mv.convert(chatgpt))
traced = mv.memory_frame(chatgpt, facts=facts)
traced[["kind", "text", "supporting_facts", "traced", "superseded_by"]]"""),
    ("md", """## As a portable Facts IR

`mv.memory_ir` (on the command line, `memvelope memory EXPORT -o memories.mv.json`) gives the memories as
a Facts IR document that validates against the export's envelope, so any tool that reads Facts IR can
take them."""),
    ("code", """out = Path(tempfile.mkdtemp()) / "memories.mv.json"
mv.write_ir(mv.memory_ir(chatgpt), out)
mv.facts_frame(out)[["category", "content", "effective_date", "convo_id"]]"""),
    ("md", """An export in the sharded ChatGPT format of 2026 keeps no system or tool messages, so no memory write
or snapshot: what it keeps is the memories ChatGPT cited in its answers, the `cited` items (the sample has
two). The frame's `attrs["notes"]` says what could not be read."""),
    ("code", """memory[memory["kind"] == "cited"][["text", "memory_id", "count", "conversation_ids"]], memory.attrs["notes"]"""),
]

NOTEBOOKS["08-everything-in-the-export.ipynb"] = [
    ("md", """# Everything in the export

The envelope keeps the prose of each conversation's active path. The export holds much more: every branch
(each edited prompt and regenerated reply), the tool calls and their output, the model's reasoning, which
model answered each reply, the custom GPT, the files you uploaded and the pictures generated for you.
This notebook reads them from the bundled ChatGPT sample; swap `mv.sample_path(...)` for your own export."""),
    ("code", """import matplotlib.pyplot as plt
import memvelope_tools as mv

export = mv.sample_path("chatgpt")
nodes = mv.nodes_frame(export)
nodes[["conversation_id", "role", "author", "kind", "model", "on_active_path", "sibling", "siblings"]].head()"""),
    ("md", """`kind` is one small vocabulary for both providers; `message_id` is the envelope's id where the
envelope keeps the node, so the two join exactly:"""),
    ("code", """messages = mv.messages_frame(export)
joined = nodes.merge(messages, on=["source", "conv_index", "message_id"])
len(joined) == len(messages), nodes["kind"].value_counts()"""),
    ("md", """## Models, features and branches over time"""),
    ("code", """fig, axes = plt.subplots(3, 1, figsize=(10, 9), layout="constrained")
mv.plot.models_over_time(nodes, ax=axes[0])
mv.plot.features_over_time(nodes, ax=axes[1])
mv.plot.branching(nodes, ax=axes[2]);"""),
    ("md", """## The inventory

`mv.inventory` (on the command line, `memvelope inventory EXPORT`) counts it all in one object, with the
files uploaded or generated (and whether the download still holds them), the projects and custom GPTs,
and the files the spec does not convert:"""),
    ("code", """found = mv.inventory(export)
found["models"], found["tools"], found["branches"], found["assets"]"""),
    ("md", """## Files and projects

`mv.assets_frame` lists every file a conversation names or the download holds; `present` says whether the
download holds it. `mv.projects_frame` lists Claude projects and the custom GPTs the conversations use."""),
    ("code", """mv.assets_frame(export)[["kind", "name", "mime", "size_bytes", "present"]]"""),
    ("code", """mv.projects_frame(mv.sample_path("claude"))[["kind", "name", "docs", "created_at"]]"""),
]


def build(name: str, cells: list[tuple[str, str]]) -> nbformat.NotebookNode:
    """A notebook of ``cells`` (``("md" | "code", source)``), no outputs, python3 kernel."""
    nb = new_notebook(metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
        "language_info": {"name": "python"},
    })
    for i, (kind, source) in enumerate(cells):
        cell = new_markdown_cell(source) if kind == "md" else new_code_cell(source)
        cell["id"] = f"{name.split('-')[0]}-{i:02d}"  # stable ids: rebuilding changes nothing
        nb.cells.append(cell)
    nbformat.validate(nb)
    return nb


# What an executed notebook must not show: a warning, or a text progress bar saved at its first state.
_WARNING = re.compile(r"Warning\b")
# ... but for the one warning (and the source line Python shows under it) a chart gives where no installed
# font has some of its letters: the README promises it on a machine without the Noto fonts.
_FONT_NOTE = re.compile(rf"^.*UserWarning: {re.escape(NO_FONT)}.*\n(?:[ \t]+.*\n?)?", re.MULTILINE)
_STUCK_BAR = re.compile(r"(?<![\d.])0%\|")


def execute(nb: nbformat.NotebookNode, cwd: Path, timeout: int = 600) -> nbformat.NotebookNode:
    """Run ``nb`` top to bottom in a ``python3`` kernel of this interpreter, with ``cwd`` as its folder.

    A kernel spec of this interpreter comes first on JUPYTER_PATH, so no other ``python3`` kernel
    installed for the user can run the notebook instead. Raises nbclient's CellExecutionError when a
    cell raises.
    """
    from nbclient import NotebookClient

    with tempfile.TemporaryDirectory() as jupyter:
        spec = Path(jupyter) / "kernels" / "python3"
        spec.mkdir(parents=True)
        # ERROR: the kernel's notice that it talks to this process over local TCP is not about the notebook.
        argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}", "--IPKernelApp.log_level=ERROR"]
        kernel = {"argv": argv, "display_name": "Python 3", "language": "python"}
        (spec / "kernel.json").write_text(json.dumps(kernel), encoding="utf-8")
        before = os.environ.get("JUPYTER_PATH")
        os.environ["JUPYTER_PATH"] = os.pathsep.join(p for p in (jupyter, before) if p)
        try:
            resources = {"metadata": {"path": str(cwd)}}
            NotebookClient(nb, kernel_name="python3", timeout=timeout, resources=resources).execute()
        finally:
            if before is None:
                del os.environ["JUPYTER_PATH"]
            else:
                os.environ["JUPYTER_PATH"] = before
    return nb


def problems(nb: nbformat.NotebookNode) -> list[str]:
    """What an executed notebook's outputs show that a finished notebook must not, one line each."""
    found = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            where = f"cell {cell.get('id')}"
            if output.output_type == "error":
                found.append(f"{where}: {output.ename}: {output.evalue}")
                continue
            if output.output_type == "stream":
                texts = [_FONT_NOTE.sub("", output.text) if output.name == "stderr" else output.text]
                if output.name == "stderr" and texts[0].strip():
                    found.append(f"{where}: writes to stderr: {output.text.strip()[:120]!r}")
            else:
                data = output.get("data", {})
                texts = [v for k, v in data.items() if k.startswith("text/") and isinstance(v, str)]
            for text in texts:
                if _WARNING.search(text):
                    found.append(f"{where}: shows a warning: {text.strip()[:120]!r}")
                if _STUCK_BAR.search(text):
                    found.append(f"{where}: shows a progress bar at 0%: {text.strip()[:120]!r}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the example notebooks; optionally execute them.")
    parser.add_argument(
        "--execute", metavar="FOLDER", type=Path, help="also run each one and save it, outputs included, here"
    )
    args = parser.parse_args(argv)
    for name, cells in NOTEBOOKS.items():
        path = HERE / name
        text = nbformat.writes(build(name, cells)) + "\n"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.name}")
    if args.execute is None:
        return 0
    args.execute.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in NOTEBOOKS:
        nb = nbformat.read(HERE / name, as_version=4)
        try:
            execute(nb, args.execute)
        except Exception as exc:  # a failing cell: report it and carry on with the others
            lines = str(exc).strip().splitlines() or [""]
            nb_problems = [f"{type(exc).__name__}: {lines[-1]}"]
        else:
            nb_problems = problems(nb)
        nbformat.write(nb, args.execute / name)
        print(f"{'ran' if not nb_problems else 'FAILED'} {name} -> {args.execute / name}")
        for line in nb_problems:
            print(f"  {line}")
        failed += bool(nb_problems)
    print(f"{len(NOTEBOOKS) - failed} of {len(NOTEBOOKS)} notebooks ran cleanly")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
