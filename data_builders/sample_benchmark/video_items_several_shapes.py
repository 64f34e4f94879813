"""Items over the sample videos with several shapes: v02 (two appear in sequence), v04 (one of two
disappears), v05 (two paths cross), v06 (the count rises, then falls), v08 (one moves diagonally,
then vanishes)."""

from __future__ import annotations

import json

from ifpo.data_builders.sample_benchmark.catalogue import (
    bullets,
    closed_set,
    csv_,
    exclude,
    fixed_closing,
    fixed_opening,
    include,
    item_count,
    json_,
    judge,
    keywords,
    labels,
    letter_case,
    lexical,
    list_count,
    markdown,
    no_contractions,
    numbered,
    ordered_list,
    paragraph_count,
    plain_text,
    prefix_label,
    response_length,
    sentence_count,
    spans,
    table,
    value_format,
    vif_json,
    word_count,
)
from ifpo.data_builders.sample_benchmark.compose import (
    _NUMBER_WORDS,
    _WHERE,
    _a,
    _branch,
    _cap,
    _item,
    _t,
    _video_evidence,
    _video_media,
)


def items_v02(path: str, v: dict) -> list[dict]:
    a, b = v["objects"]
    A, B = a["name"], b["name"]
    ev = _video_evidence(v)
    media = _video_media(path)
    gap = b["appear_sec"] - a["appear_sec"]
    items = []
    items.append(_item(
        "v02-single-1", media=media,
        task="List the events of the video in order.",
        tasks=[("event_sequencing", "Order the appearance events of the video.")],
        constraints=[
            ordered_list(2),
            list_count(2, 2),
            labels(["first", "second"], allow_duplicates=False),
            judge("chronological", "Keep the entries in the order the events happen.", {}, ev),
        ],
        reference=(f"- first: {_a(A)} appears {_WHERE[a['start_position']]} at {_t(a['appear_sec'])}\n"
                   f"- second: {_a(B)} appears {_WHERE[b['start_position']]} at {_t(b['appear_sec'])}"),
        ground_truth=v["summary"],
    ))
    items.append(_item(
        "v02-single-2", media=media,
        task="Where is each shape at the end of the video?",
        tasks=[("spatial_arrangement_description", "Give the final position of each shape.")],
        constraints=[
            csv_(["object", "position"], 2),
            letter_case("lower"),
            include([a["end_position"], b["end_position"]]),
        ],
        reference=f"object,position\n{A},{a['end_position']}\n{B},{b['end_position']}",
        ground_truth=v["final_state"],
    ))
    items.append(_item(
        "v02-multi-1", media=media, structure="multi",
        task=("Answer both questions: which shape appears first, and how many seconds pass between the "
              "two appearances?"),
        tasks=[("event_sequencing", "Say which shape appears first."),
               ("temporal_query", "Give the time between the two appearances.")],
        constraints=[
            table(2, ["question", "answer"]),
            markdown(["table"]),
            keywords(["seconds"]),
        ],
        reference=("| question | answer |\n|---|---|\n"
                   f"| Which shape appears first? | The {A}, at {_t(a['appear_sec'])} |\n"
                   f"| Time between the appearances | {gap:.1f} seconds |"),
        ground_truth=f"The {A} appears first; {gap:.1f} seconds pass before the {B} appears.",
    ))
    items.append(_item(
        "v02-selection-1", media=media, structure="selection",
        preamble="Decide which case matches the video and follow only that one.",
        branches=[
            _branch(f"the {b['shape']} appears before the {a['shape']}", "name the corner it appears in."),
            _branch(f"the {a['shape']} appears before the {b['shape']}", None, active=True),
            _branch("both shapes appear at the same moment", "give that moment in seconds."),
        ],
        task=(f"describe what the frame looks like at {_t((a['appear_sec'] + b['appear_sec']) / 2)}, before "
              f"the second shape arrives."),
        tasks=[("temporal_query", "Describe the frame between the two appearances.")],
        constraints=[
            sentence_count(2, 2),
            include(["only"]),
            judge("content_inclusion", f"Mention the {A} and its corner.", {"items": [A, "top-left corner"]},
                  ev, subs=[f"Does the response mention the {A}?",
                            f"Does it place the {A} {_WHERE[a['start_position']]}?",
                            f"Does it say the {B} is not yet visible?"]),
        ],
        reference=(f"At that moment the {A} is the only object in the frame, sitting "
                   f"{_WHERE[a['start_position']]}. The {B} has not appeared yet, so the rest of the frame "
                   "is only white background."),
        ground_truth=f"Only the {A} is visible, {_WHERE[a['start_position']]}.",
    ))
    items.append(_item(
        "v02-nested-1", media=media, structure="nested",
        preamble="Check the conditions level by level and follow only the path that is true for the video.",
        branches=[
            _branch("only one shape ever appears", "describe it in one sentence."),
            _branch("two shapes appear", "check the cases below.", active=True, branches=[
                _branch("they appear at the same moment", "give that moment."),
                _branch(f"the second one appears {gap:.1f} seconds after the first", None, active=True),
            ]),
        ],
        task=f"retell the video from the point of view of the {B}.",
        tasks=[("point_of_view_reframing", f"Retell the video as the {B} would see it.")],
        constraints=[
            fixed_opening("I am the"),
            word_count(20, 45),
            no_contractions(),
            judge("tone", "Use a curious, friendly tone.", {"tone": "curious, friendly"}, ev),
        ],
        reference=(f"I am the {B}. I arrive {_WHERE[b['start_position']]} at {_t(b['appear_sec'])}, {gap:.1f} "
                   f"seconds after the {A} took its place {_WHERE[a['start_position']]}. We both stay where we "
                   "are until the end."),
        ground_truth=f"The {B} appears {gap:.1f} seconds after the {A}.",
    ))
    return items


def items_v04(path: str, v: dict) -> list[dict]:
    a, b = v["objects"]
    A, B = a["name"], b["name"]
    gone = b["disappear_sec"]
    ev = _video_evidence(v)
    media = _video_media(path)
    items = []
    items.append(_item(
        "v04-single-1", media=media,
        task="List every event of the video in order.",
        tasks=[("event_sequencing", "Order all events of the video.")],
        constraints=[
            numbered(3),
            prefix_label("Event {n}:"),
            lexical([a["shape"], b["shape"]], 2),
        ],
        reference=(f"1. Event 1: {_cap(_a(A))} appears {_WHERE[a['start_position']]} at {_t(a['appear_sec'])}.\n"
                   f"2. Event 2: At the same time, {_a(B)} appears {_WHERE[b['start_position']]}.\n"
                   f"3. Event 3: At {_t(gone)} the {b['color']} one disappears, leaving the {a['color']} one alone."),
        ground_truth=v["summary"],
    ))
    items.append(_item(
        "v04-single-2", media=media,
        task=f"What would the end of the video look like if the {B} had never disappeared?",
        tasks=[("counterfactual_reasoning", "Reason about the final frame without the disappearance.")],
        constraints=[
            fixed_opening("In the real video,"),
            sentence_count(3, 4),
            exclude(["vanish", "vanishes"]),
            judge("counterfactual", "Structure the answer as observed facts, the change, and the predicted outcome.",
                  {"intervention": f"the {B} never disappears"}, ev),
        ],
        reference=(f"In the real video, the {B} disappears at {_t(gone)} and only the {A} remains "
                   f"{_WHERE[a['start_position']]}. Suppose instead that the {B} never disappeared. Then the "
                   f"last frame would show both shapes, the {A} {_WHERE[a['start_position']]} and the {B} "
                   f"{_WHERE[b['start_position']]}."),
        ground_truth=f"Both the {A} and the {B} would still be visible at the end.",
    ))
    items.append(_item(
        "v04-single-3", media=media,
        task=(f"Which shape is still visible at {_t(gone + 1.0)}? Options: (A) the {A}, (B) the {B}, "
              "(C) both, (D) neither."),
        tasks=[("temporal_query", "Pick which shape is visible after the disappearance.")],
        constraints=[
            closed_set(["A", "B", "C", "D"], allow_explanation=True),
            response_length(5, 30),
            keywords([a["color"]]),
        ],
        reference=f"A. Only the {A} is still visible; the {B} is gone since {_t(gone)}.",
        ground_truth="A",
    ))
    items.append(_item(
        "v04-selection-1", media=media, structure="selection",
        preamble="Exactly one case below matches the video; carry out only that one.",
        branches=[
            _branch("both shapes disappear", "say when the frame becomes empty."),
            _branch("a third shape appears later", "describe the new shape."),
            _branch("exactly one of the two shapes disappears", None, active=True),
        ],
        task="write a brief incident report about what happened to the missing shape.",
        tasks=[("professional_writing", "Write a formal report of the disappearance.")],
        constraints=[
            markdown(["heading", "list"]),
            bullets(3, allow_text=True),
            fixed_closing("Report ends."),
            judge("persona", "Write as a night-shift security guard filing a report.",
                  {"persona": "a night-shift security guard"}, ev),
        ],
        reference=(f"## Incident report\n"
                   f"- {_t(b['appear_sec'])}: the {B} and the {A} both come into view.\n"
                   f"- {_t(gone)}: the {B} on the right is suddenly gone from my screen.\n"
                   f"- After that: only the {A} on the left remains, and it stays put.\n"
                   "Nothing else moved on my watch. Report ends."),
        ground_truth=f"The {B} disappears at {_t(gone)}.",
    ))
    return items


def items_v05(path: str, v: dict) -> list[dict]:
    a, b = v["objects"]
    A, B = a["name"], b["name"]
    ma = next(e for e in v["events"] if e["kind"] == "move" and e["object"] == A)
    mb = next(e for e in v["events"] if e["kind"] == "move" and e["object"] == B)
    a0, a1, b0, b1 = ma["time_sec"], ma["end_time_sec"], mb["time_sec"], mb["end_time_sec"]
    ev = _video_evidence(v)
    media = _video_media(path)
    items = []
    items.append(_item(
        "v05-single-1", media=media,
        task="When and how does each shape move?",
        tasks=[("event_sequencing", "Give each movement with its time span.")],
        constraints=[
            table(2, ["time span", "object", "motion"]),
            spans(2),
            markdown(["table"]),
        ],
        reference=("| time span | object | motion |\n|---|---|---|\n"
                   f"| {_t(a0)} to {_t(a1)} | {A} | {a['start_position']} to {a['end_position']} |\n"
                   f"| {_t(b0)} to {_t(b1)} | {B} | {b['start_position']} to {b['end_position']} |"),
        ground_truth=v["summary"],
    ))
    items.append(_item(
        "v05-single-2", media=media,
        task="Describe how the paths of the two shapes relate to each other.",
        tasks=[("object_relationship", "Describe how the two paths relate.")],
        constraints=[
            word_count(25, 50),
            include(["center"]),
            judge("tracking", "Keep track of each shape by name all the way through.", {"entities": [A, B]}, ev),
            judge("focus", "Focus on where and in which order the paths cross.",
                  {"aspects": ["the crossing point", "the order of passing"]}, ev),
        ],
        reference=(f"The {A} travels horizontally from the {a['start_position']} to the {a['end_position']}, "
                   f"while the {B} travels vertically from the {b['start_position']} to the "
                   f"{b['end_position']}. Their paths cross in the center, and the {A} passes that point "
                   f"first."),
        ground_truth=f"The paths cross in the center; the {A} passes first.",
    ))
    items.append(_item(
        "v05-multi-1", media=media, structure="multi",
        task=("Answer three questions: (1) which shape starts moving first, (2) during which span are both "
              "shapes moving, and (3) which shape passes the center first?"),
        tasks=[("event_sequencing", "Say which shape starts moving first."),
               ("temporal_query", "Give the span when both move."),
               ("object_relationship", "Say which shape passes the center first.")],
        constraints=[
            numbered(3),
            list_count(3, 3),
            spans(1),
            no_contractions(),
        ],
        reference=(f"1. The {A} starts moving first, at {_t(a0)}.\n"
                   f"2. Both shapes are moving from {_t(max(a0, b0))} to {_t(min(a1, b1))}.\n"
                   f"3. The {A} passes the center first."),
        ground_truth=(f"The {A} starts first; both move from {_t(max(a0, b0))} to {_t(min(a1, b1))}; "
                      f"the {A} passes the center first."),
    ))
    items.append(_item(
        "v05-nested-1", media=media, structure="nested",
        preamble="Follow the single path of cases whose conditions all hold, then do what its last case says.",
        branches=[
            _branch("only one shape moves", "describe that movement in one sentence."),
            _branch("both shapes move", "go on to the cases below.", active=True, branches=[
                _branch(f"the {b['shape']} starts moving before the {a['shape']}", "say by how much."),
                _branch(f"the {a['shape']} starts moving before the {b['shape']}", "go on to the cases below.",
                        active=True, branches=[
                            _branch(f"the {a['shape']} stops before the {b['shape']} starts",
                                    "give the pause between them."),
                            _branch("the two movements overlap in time", None, active=True),
                        ]),
            ]),
        ],
        task="describe the overlap of the two movements.",
        tasks=[("temporal_query", "Describe when the two movements overlap.")],
        constraints=[
            sentence_count(2, 3),
            include(["overlap"]),
            spans(1),
        ],
        reference=(f"The two movements overlap from {_t(max(a0, b0))} to {_t(min(a1, b1))}. During that "
                   f"second the {A} is still heading {a['end_position']} while the {B} has begun its descent. "
                   f"This overlap is when their paths cross in the center."),
        ground_truth=f"They overlap from {_t(max(a0, b0))} to {_t(min(a1, b1))}.",
    ))
    return items


def items_v06(path: str, v: dict) -> list[dict]:
    objs = v["objects"]
    ev = _video_evidence(v)
    media = _video_media(path)
    peak = v["max_objects_visible"]
    # visible count after each event, from the facts
    count, timeline = 0, []
    for e in v["events"]:
        count += 1 if e["kind"] == "appear" else -1 if e["kind"] == "disappear" else 0
        timeline.append({"time": _t(e["time_sec"]), "visible": count})
    peak_time = next(t["time"] for t in timeline if t["visible"] == peak)
    stay = [o for o in objs if o["disappear_sec"] is None]
    left = [o for o in objs if o["disappear_sec"] is not None]
    items = []
    items.append(_item(
        "v06-single-1", media=media,
        task="How many shapes are visible after each event of the video?",
        tasks=[("state_change_detection", "Track the visible count after every event.")],
        constraints=[
            json_(["time", "visible"], top="array"),
            vif_json(schema=[{"time": "", "visible": 0}], top="array"),
            value_format('Write times like "1.5 s" and counts as plain digits.', patterns=[r"\d+\.\d s", r"\d"]),
        ],
        reference=json.dumps(timeline),
        ground_truth=f"The count rises to {peak} at {peak_time} and falls to {len(stay)}.",
    ))
    items.append(_item(
        "v06-single-2", media=media,
        task="Summarize the video.",
        tasks=[("summarization", "Summarize the video at a high level.")],
        constraints=[
            word_count(30, 60),
            sentence_count(3, 4),
            lexical(None, 2),
            judge("summarize", "Give a high-level summary rather than a frame-by-frame transcript.", {}, ev),
            judge("hierarchical", "Start with the overall pattern, then give the details.",
                  {"direction": "general_to_specific"}, ev),
        ],
        reference=(f"The number of visible shapes first rises and then falls. One after another, "
                   f"{_NUMBER_WORDS[len(objs)]} shapes appear in the corners until {_NUMBER_WORDS[peak]} are on "
                   f"screen at {peak_time}. Then the {left[0]['name']} and the {left[1]['name']} disappear, "
                   f"leaving the {stay[0]['name']} and the {stay[1]['name']} at the bottom."),
        ground_truth=v["summary"],
    ))
    items.append(_item(
        "v06-multi-1", media=media, structure="multi",
        task=("Answer two questions: what is the largest number of shapes visible at once and when is it "
              "first reached, and which shapes remain at the end, and where?"),
        tasks=[("temporal_query", "Give the peak count and its time."),
               ("spatial_arrangement_description", "Say which shapes remain and where.")],
        constraints=[
            markdown(["heading"]),
            paragraph_count(2, 2),
            keywords([_NUMBER_WORDS[peak]]),
            include([peak_time]),
        ],
        reference=(f"## Peak\nAt most {_NUMBER_WORDS[peak]} shapes are visible at once, first at {peak_time}.\n\n"
                   f"## Remaining\nThe {stay[0]['name']} stays {_WHERE[stay[0]['start_position']]} and the "
                   f"{stay[1]['name']} stays {_WHERE[stay[1]['start_position']]}."),
        ground_truth=f"{_cap(_NUMBER_WORDS[peak])} at {peak_time}; {v['final_state']}",
    ))
    t_peak = next(e["time_sec"] for e, t in zip(v["events"], timeline) if t["visible"] == peak)
    visible_at_peak = [o for o in objs if o["appear_sec"] <= t_peak
                       and (o["disappear_sec"] is None or o["disappear_sec"] > t_peak)]
    items.append(_item(
        "v06-selection-1", media=media, structure="selection",
        preamble="Count the shapes that are visible at the same time, then carry out the matching case only.",
        branches=[
            _branch("at most two shapes are ever visible together", "name them."),
            _branch("exactly three shapes are the most ever visible together", "say which one is missing."),
            _branch(f"{_NUMBER_WORDS[peak]} shapes are visible together at some moment", None, active=True),
            _branch("five or more shapes are visible together", "describe the crowd."),
        ],
        task="list the shapes that are visible at that moment, from top to bottom.",
        tasks=[("spatial_arrangement_description", "List the shapes visible at the peak, by position.")],
        constraints=[
            bullets(peak),
            item_count(peak, peak, "bullet"),
            letter_case("lower"),
            judge("spatial_grouping", "Order the shapes from the top row to the bottom row.",
                  {"order": "top to bottom"}, ev),
        ],
        reference="\n".join(f"- {o['name']} {_WHERE[o['start_position']]}" for o in visible_at_peak),
        ground_truth=", ".join(o["name"] for o in visible_at_peak),
    ))
    same_order = [o["name"] for o in sorted(left, key=lambda o: o["appear_sec"])] == \
        [o["name"] for o in sorted(left, key=lambda o: o["disappear_sec"])]
    orders = ("they disappear in the reverse order of their appearance",
              "they disappear in the order in which they appeared")
    items.append(_item(
        "v06-nested-1", media=media, structure="nested",
        preamble="Follow the single path of cases that is true for the video, then do what its last case says.",
        branches=[
            _branch("some shapes disappear", "check the cases below.", active=True, branches=[
                _branch(orders[not same_order], "say which shape disappears last."),
                _branch(orders[same_order], None, active=True),
            ]),
            _branch("no shape ever disappears", "say how many shapes are visible at the end."),
        ],
        task="list the disappearances with their times.",
        tasks=[("event_sequencing", "List the disappearances in order.")],
        constraints=[
            numbered(len(left)),
            prefix_label("Gone:"),
            list_count(len(left), len(left)),
            exclude(["vanish", "vanishes"]),
        ],
        reference="\n".join(f"{k}. Gone: the {o['name']} at {_t(o['disappear_sec'])}"
                            for k, o in enumerate(sorted(left, key=lambda o: o["disappear_sec"]), start=1)),
        ground_truth="; ".join(f"{o['name']} at {_t(o['disappear_sec'])}"
                               for o in sorted(left, key=lambda o: o["disappear_sec"])),
    ))
    return items


def items_v08(path: str, v: dict) -> list[dict]:
    a, b = v["objects"]
    A, B = a["name"], b["name"]
    move = next(e for e in v["events"] if e["kind"] == "move")
    m0, m1 = move["time_sec"], move["end_time_sec"]
    gone = b["disappear_sec"]
    ev = _video_evidence(v)
    media = _video_media(path)
    visible = gone - b["appear_sec"]
    items = []
    items.append(_item(
        "v08-single-1", media=media,
        task=f"Follow the {b['shape']} through the video and describe its journey.",
        tasks=[("event_sequencing", f"Describe the journey of the {b['shape']}.")],
        constraints=[
            word_count(30, 60),
            include(["diagonally"]),
            no_contractions(),
            judge("tracking", f"Keep the {B} identified consistently from appearance to disappearance.",
                  {"entities": [B]}, ev),
        ],
        reference=(f"The {B} appears {_WHERE[b['start_position']]} at {_t(b['appear_sec'])}. From {_t(m0)} "
                   f"to {_t(m1)} it moves diagonally to the bottom-right corner, passing the center. It rests "
                   f"there briefly and disappears at {_t(gone)}, while the {A} never moves."),
        ground_truth=f"The {B} moves diagonally and disappears at {_t(gone)}.",
    ))
    items.append(_item(
        "v08-single-2", media=media,
        task=f"For how long is the {b['shape']} visible?",
        tasks=[("temporal_query", f"Give how long the {b['shape']} is visible.")],
        constraints=[
            closed_set(["1.5 s", "2.5 s", "3.0 s", "3.5 s"]),
            value_format('Write the duration as seconds with one decimal and the unit, like "1.5 s".',
                         patterns=[r"\d+\.\d s"]),
        ],
        reference=_t(visible),
        ground_truth=_t(visible),
    ))
    items.append(_item(
        "v08-multi-1", media=media, structure="multi",
        task=("Answer two questions: which object never moves and where is it, and where does the moving "
              "object disappear?"),
        tasks=[("spatial_arrangement_description", "Name the still object and its position."),
               ("temporal_query", "Say where the moving object disappears.")],
        constraints=[
            csv_(["question", "answer"], 2),
            table(2, ["question", "answer"], formats=("csv",)),
            exclude(["maybe"]),
        ],
        reference=("question,answer\n"
                   f"still object,the {A} {_WHERE[a['start_position']]}\n"
                   f"where the moving object disappears,{_WHERE[b['end_position']]} at {_t(gone)}"),
        ground_truth=f"The {A} never moves ({a['start_position']}); the {B} disappears {_WHERE[b['end_position']]}.",
    ))
    items.append(_item(
        "v08-selection-1", media=media, structure="selection",
        preamble="Pick the case that is true for the video and follow only it.",
        branches=[
            _branch(f"the {a['shape']} also moves", "compare the two paths."),
            _branch(f"the {b['shape']} disappears before the video ends", None, active=True),
            _branch(f"the {b['shape']} stays visible until the end", "describe the last frame."),
        ],
        task=f"commentate the {b['shape']}'s run as if it were a sports event.",
        tasks=[("role_play_response", "Commentate the video as a sports commentator.")],
        constraints=[
            fixed_opening("Live from the frame:"),
            sentence_count(3, 5),
            judge("persona", "Speak as an excited sports commentator.", {"persona": "a sports commentator"}, ev),
            judge("sequence_marker_inclusion", 'Use the markers "first", "then" and "finally".',
                  {"markers": ["first", "then", "finally"]}, ev),
        ],
        reference=(f"Live from the frame: first, the {B} takes its spot {_WHERE[b['start_position']]} at "
                   f"{_t(b['appear_sec'])}! Then, at {_t(m0)}, it charges diagonally and reaches the "
                   f"bottom-right corner at {_t(m1)}. Finally, at {_t(gone)}, it vanishes from the field, and "
                   f"the {A} holds its corner to the end!"),
        ground_truth=f"The {b['shape']} disappears at {_t(gone)}.",
    ))
    first = [o for o in v["objects"] if o["appear_sec"] == 0.0]
    items.append(_item(
        "v08-single-3", media=media,
        task="What is visible in the very first frame of the video?",
        tasks=[("temporal_query", "Describe the first frame.")],
        constraints=[
            plain_text(),
            letter_case("upper"),
            word_count(8, 25),
        ],
        reference=("IN THE FIRST FRAME ONLY " + " AND ".join(f"THE {o['name'].upper()} {_WHERE[o['start_position']].upper()}"
                                                          for o in first)
                   + f" IS VISIBLE. THE {B.upper()} ARRIVES LATER."),
        ground_truth=f"Only the {A} is visible.",
    ))
    return items
