"""Items over the sample videos with one shape: v01 (a circle moves right), v03 (a square changes
colour), v07 (a star moves down, then changes colour)."""

from __future__ import annotations

import json

from ifpo.data_builders.sample_benchmark.catalogue import (
    bullets,
    exclude,
    fixed_closing,
    fixed_opening,
    forbidden,
    include,
    item_count,
    json_,
    judge,
    keywords,
    labels,
    letter_case,
    markdown,
    no_contractions,
    numbered,
    ordered_list,
    paragraph_count,
    paragraph_count_vif,
    plain_text,
    prefix_label,
    response_length,
    sentence_count,
    spans,
    value_format,
    vif_json,
    word_count,
)
from ifpo.data_builders.sample_benchmark.compose import (
    _WHERE,
    _a,
    _branch,
    _cap,
    _item,
    _other_color,
    _t,
    _video_evidence,
    _video_media,
)
from ifpo.data_builders.sample_benchmark.media import PALETTE, POSITIONS


def items_v01(path: str, v: dict) -> list[dict]:
    o = v["objects"][0]
    name, shape = o["name"], o["shape"]
    move = next(e for e in v["events"] if e["kind"] == "move")
    m0, m1, appear, dur = move["time_sec"], move["end_time_sec"], o["appear_sec"], v["duration_sec"]
    start, end = o["start_position"], o["end_position"]
    ev = _video_evidence(v)
    media = _video_media(path)
    items = []
    items.append(_item(
        "v01-single-1", media=media,
        task="Describe what happens in the video.",
        tasks=[("summarization", "Summarize the events of the video.")],
        constraints=[
            word_count(20, 40),
            exclude(["shape"]),
            judge("chronological", "Describe the events in the order they happen.", {}, ev),
        ],
        reference=(f"{_cap(_a(name))} appears {_WHERE[start]} at {_t(appear)}. It waits there until "
                   f"{_t(m0)}, then glides steadily to the {end} and arrives at {_t(m1)}, where it stays "
                   f"until the clip ends at {_t(dur)}."),
        ground_truth=v["summary"],
    ))
    items.append(_item(
        "v01-single-2", media=media,
        task=f"When is the {shape} moving?",
        tasks=[("temporal_query", f"Give the time span during which the {shape} moves.")],
        constraints=[
            spans(1),
            response_length(10, 30),
            fixed_closing("End of report."),
        ],
        reference=(f"The {name} moves from {_t(m0)} to {_t(m1)}, travelling from the {start} side of "
                   f"the frame to the {end} side. End of report."),
        ground_truth=f"From {_t(m0)} to {_t(m1)}.",
    ))
    items.append(_item(
        "v01-multi-1", media=media, structure="multi",
        task=(f"Answer two questions about the video: (1) at what time does the {shape} first appear, "
              f"and (2) where is it when the video ends?"),
        tasks=[("temporal_query", f"Give the time the {shape} first appears."),
               ("spatial_arrangement_description", f"Give the {shape}'s final position.")],
        constraints=[
            json_(["appear_time", "final_position"]),
            vif_json(["appear_time", "final_position"], {"appear_time": "", "final_position": ""}),
            value_format("Write times as seconds with one decimal and the unit, like \"1.5 s\", and "
                         "positions as one of: " + ", ".join(POSITIONS) + ".",
                         patterns=[r"\d+\.\d s"], values=list(POSITIONS)),
        ],
        reference=json.dumps({"appear_time": _t(appear), "final_position": end}),
        ground_truth=f"It appears at {_t(appear)} and ends on the {end}.",
    ))
    wrong_dir = (f"the {shape} moves from the {end} to the {start}",
                 f"the {shape} never moves")
    items.append(_item(
        "v01-selection-1", media=media, structure="selection",
        preamble="Watch the video and carry out only the case whose condition is true.",
        branches=[
            _branch(wrong_dir[0], "describe its path in one sentence."),
            _branch(f"the {shape} moves from the {start} to the {end}", None, active=True),
            _branch(wrong_dir[1], "state how long it stays visible."),
        ],
        task=f"write a short tutorial on how to redraw the motion of the {shape} as steps.",
        tasks=[("tutorial_generation", f"Turn the {shape}'s motion into step-by-step instructions.")],
        constraints=[
            numbered(4),
            item_count(4, 4, "numbered"),
            prefix_label("Step {n}:"),
            no_contractions(),
        ],
        reference=(f"1. Step 1: Draw {_a(name)} {_WHERE[start]} of an empty white frame at {_t(appear)}.\n"
                   f"2. Step 2: Keep it still until {_t(m0)}.\n"
                   f"3. Step 3: Slide it at a constant speed to the {end} between {_t(m0)} and {_t(m1)}.\n"
                   f"4. Step 4: Leave it {_WHERE[end]} until {_t(dur)}."),
        ground_truth=f"The {shape} moves from the {start} to the {end} ({_t(m0)} to {_t(m1)}).",
    ))
    items.append(_item(
        "v01-single-3", media=media,
        task=f"If the video went on for a few more seconds, where would the {shape} most likely be?",
        tasks=[("predictive_reasoning", "Predict the position after the clip, grounded in the motion.")],
        constraints=[
            plain_text(),
            word_count(15, 40),
            judge("causal", "Give the observed cause first, then the predicted effect, with an explicit link.",
                  {}, ev),
        ],
        reference=(f"The {name} stops on the {end} at {_t(m1)} and does not move again before {_t(dur)}. "
                   f"Because of that, it would most likely still be {_WHERE[end]}."),
        ground_truth=f"Still {_WHERE[end]}.",
    ))
    return items


def items_v03(path: str, v: dict) -> list[dict]:
    o = v["objects"][0]
    shape = o["shape"]
    ch = o["color_changes"][0]
    c0, c1, tc = ch["from"], ch["to"], ch["time_sec"]
    ev = _video_evidence(v)
    media = _video_media(path)
    items = []
    items.append(_item(
        "v03-single-1", media=media,
        task=f"At what time does the {shape} change colour?",
        tasks=[("state_change_detection", "Give the time of the colour change.")],
        constraints=[
            value_format('Reply with the time only, as seconds with one decimal and the unit, like "1.5 s".',
                         patterns=[r"\d+\.\d s"]),
            response_length(1, 3),
        ],
        reference=_t(tc),
        ground_truth=_t(tc),
    ))
    items.append(_item(
        "v03-single-2", media=media,
        task=f"Describe how the {shape} changes during the video.",
        tasks=[("state_change_detection", f"Describe the change of the {shape} from early to late.")],
        constraints=[
            paragraph_count(2, 2),
            fixed_opening("Before the change,"),
            judge("tense", "Write consistently in the past tense.", {"tense": "past"}, ev),
        ],
        reference=(f"Before the change, the {shape} in the center was {c0}. It appeared at {_t(o['appear_sec'])} "
                   f"and stayed in place.\n\n"
                   f"At {_t(tc)} it turned {c1} and kept that colour until the end at {_t(v['duration_sec'])}. "
                   "It never moved."),
        ground_truth=f"The {shape} turns from {c0} to {c1} at {_t(tc)}.",
    ))
    items.append(_item(
        "v03-multi-1", media=media, structure="multi",
        task=(f"Answer two questions: what colour is the {shape} at first and at the end, and when does it "
              "change?"),
        tasks=[("state_change_detection", "Give the colours before and after."),
               ("temporal_query", "Give the time of the change.")],
        constraints=[
            bullets(2),
            item_count(2, 2, "bullet"),
            keywords([c0, c1]),
            forbidden(["maybe", "probably"]),
        ],
        reference=(f"- Colours: {c0} at first, {c1} at the end.\n"
                   f"- Time of the change: {_t(tc)}."),
        ground_truth=f"{_cap(c0)} then {c1}; the change happens at {_t(tc)}.",
    ))
    wrong = _other_color(c0, c1)
    items.append(_item(
        "v03-nested-1", media=media, structure="nested",
        preamble="Follow the one path of cases whose conditions all hold for the video.",
        branches=[
            _branch(f"the {shape} changes colour", "continue with the cases below.", active=True, branches=[
                _branch(f"it turns {wrong}", "name the frame where it happens."),
                _branch(f"it turns {c1}", None, active=True),
            ]),
            _branch(f"the {shape} keeps one colour", "describe its position in one sentence."),
        ],
        task="write a short social media caption announcing the colour change.",
        tasks=[("platform_copywriting", "Write a caption grounded in the colour change.")],
        constraints=[
            word_count(10, 25),
            include(["#ColorShift"]),
            no_contractions(),
            judge("tone", "Use a playful, upbeat tone.", {"tone": "playful, upbeat"}, ev),
        ],
        reference=(f"Watch closely: our {c0} {shape} sits in the center, then at {_t(tc)} it flips to "
                   f"{c1}! #ColorShift"),
        ground_truth=f"The {shape} turns {c1} at {_t(tc)}.",
    ))
    items.append(_item(
        "v03-selection-1", media=media, structure="selection",
        preamble="Only one case matches the video; carry out that case and ignore the others.",
        branches=[
            _branch(f"the {shape} changes colour while it moves", "describe its path."),
            _branch(f"the {shape} disappears", "give the time it disappears."),
            _branch(f"the {shape} changes colour while standing still in the center", None, active=True),
        ],
        task=f"predict the colour of the {shape} at the end of the clip and justify the prediction.",
        tasks=[("predictive_reasoning", "Predict the final colour from the observed change.")],
        constraints=[
            fixed_opening("Prediction:"),
            sentence_count(2, 2),
            plain_text(),
            keywords([c1], min_occurrences=2),
        ],
        reference=(f"Prediction: the {shape} will still be {c1} at the end of the clip. It turned {c1} at "
                   f"{_t(tc)} and no other change follows."),
        ground_truth=f"{_cap(c1)}.",
    ))
    return items


def items_v07(path: str, v: dict) -> list[dict]:
    o = v["objects"][0]
    name, shape = o["name"], o["shape"]
    move = next(e for e in v["events"] if e["kind"] == "move")
    m0, m1 = move["time_sec"], move["end_time_sec"]
    ch = o["color_changes"][0]
    c0, c1, tc = ch["from"], ch["to"], ch["time_sec"]
    ev = _video_evidence(v)
    media = _video_media(path)
    items = []
    items.append(_item(
        "v07-single-1", media=media,
        task="List the events of the video in order and label each one with its kind.",
        tasks=[("event_sequencing", "Order and label the events.")],
        constraints=[
            ordered_list(3, numbered_only=True),
            labels(["appear", "move", "color_change", "disappear"]),
            judge("sequence_marker_inclusion", 'Use the sequence markers "first", "then" and "finally".',
                  {"markers": ["first", "then", "finally"]}, ev),
        ],
        reference=(f"1. appear: first, {_a(name)} shows up {_WHERE[o['start_position']]} at {_t(o['appear_sec'])}.\n"
                   f"2. move: then it travels to the {o['end_position']} between {_t(m0)} and {_t(m1)}.\n"
                   f"3. color_change: finally, it turns {c1} at {_t(tc)}."),
        ground_truth=v["summary"],
    ))
    items.append(_item(
        "v07-single-2", media=media,
        task=f"Write a very short story about the {shape} in the video.",
        tasks=[("creative_writing", "Write a story that keeps to the visible facts.")],
        constraints=[
            paragraph_count_vif(3, 3),
            fixed_opening("Once upon a time"),
            exclude(["teleport", "teleports"]),
            judge("rhetoric", "Use at least one simile.", {"devices": ["simile"]}, ev),
        ],
        reference=(f"Once upon a time, a small {c0} {shape} woke up {_WHERE[o['start_position']]} of a white sky.\n\n"
                   f"It slid down like a raindrop on a window and reached the {o['end_position']} in "
                   f"{m1 - m0:.1f} seconds.\n\n"
                   f"Resting there, it glowed and turned {c1}, and it stayed that way until the end."),
        ground_truth=v["summary"],
    ))
    items.append(_item(
        "v07-multi-1", media=media, structure="multi",
        task=f"Answer two questions: how many seconds does the descent of the {shape} take, and what is its final colour?",
        tasks=[("temporal_query", "Give the duration of the descent."),
               ("state_change_detection", "Give the final colour.")],
        constraints=[
            vif_json(["descent_seconds", "final_color"], forbidden_keys=["notes"]),
            value_format("Give the duration as a plain number and the colour as one lowercase word.",
                         patterns=[r"\d+(?:\.\d+)?"], values=list(PALETTE)),
            letter_case("lower"),
        ],
        reference=json.dumps({"descent_seconds": round(m1 - m0, 1), "final_color": c1}),
        ground_truth=f"{m1 - m0:.1f} seconds; {c1}.",
    ))
    items.append(_item(
        "v07-nested-1", media=media, structure="nested",
        preamble="Check the conditions level by level and execute only the final case of the true path.",
        branches=[
            _branch(f"the {shape} moves", "check the cases below.", active=True, branches=[
                _branch("it changes colour while it is still moving", "say where it is when the colour changes."),
                _branch("it changes colour after it has stopped", None, active=True),
            ]),
            _branch(f"the {shape} stays where it is", "describe its colour."),
        ],
        task="write a checklist for checking that a replay of this video is correct.",
        tasks=[("practical_writing", "Write an actionable checklist grounded in the video.")],
        constraints=[
            markdown(["heading", "list"]),
            bullets(3, allow_text=True),
            fixed_closing("All checks done."),
            judge("target_audience", "Write for a video editor checking the replay.",
                  {"audience": "a video editor"}, ev),
        ],
        reference=(f"## Replay checklist\n"
                   f"- The {name} appears {_WHERE[o['start_position']]} at {_t(o['appear_sec'])}.\n"
                   f"- It moves down to the {o['end_position']} from {_t(m0)} to {_t(m1)}.\n"
                   f"- It turns {c1} at {_t(tc)}, after it has stopped.\n"
                   "All checks done."),
        ground_truth=f"It changes colour at {_t(tc)}, after stopping at {_t(m1)}.",
    ))
    return items
