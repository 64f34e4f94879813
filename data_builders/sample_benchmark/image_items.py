"""Items over the sample images (i01 to i08): Single, Multi, Selection and Nested instructions
with VCIFBench and Video-IFBench constraints grounded in each image's shapes, positions and text."""

from __future__ import annotations

import json

from ifpo.data_builders.sample_benchmark.catalogue import (
    bullets,
    csv_,
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
    lexical,
    list_count,
    markdown,
    no_contractions,
    numbered,
    ordered_list,
    paragraph_count_vif,
    prefix_label,
    response_length,
    sentence_count,
    table,
    value_format,
    verbatim,
    vif_json,
    word_count,
)
from ifpo.data_builders.sample_benchmark.compose import (
    _NUMBER_WORDS,
    _WHERE,
    _a,
    _branch,
    _cap,
    _image_evidence,
    _image_media,
    _item,
    _other_shape,
)
from ifpo.data_builders.sample_benchmark.media import PALETTE


def _objects_by_pos(im: dict) -> dict[str, dict]:
    return {o["position"]: o for o in im["objects"]}


def build_image_items(img: dict[str, tuple[str, dict]]) -> list[dict]:
    items: list[dict] = []

    # ---- i01: a row of three shapes
    p, im = img["i01"]
    ev, media = _image_evidence(im), _image_media(p)
    row = sorted(im["objects"], key=lambda o: ["left", "center", "right"].index(o["position"]))
    items.append(_item(
        "i01-single-1", media=media,
        task="Describe the arrangement of the shapes from left to right.",
        tasks=[("spatial_arrangement_description", "Describe the left-to-right layout.")],
        constraints=[
            numbered(3),
            prefix_label("Position {n}:"),
            letter_case("sentence"),
            judge("spatial_grouping", "Organize the answer from left to right.", {"order": "left to right"}, ev),
        ],
        reference="\n".join(f"{k}. Position {k}: {_cap(_a(o['name']))} {_WHERE[o['position']]}."
                            for k, o in enumerate(row, start=1)),
        ground_truth=im["summary"],
    ))
    mid = row[1]
    items.append(_item(
        "i01-selection-1", media=media, structure="selection",
        preamble="Look at the middle shape and follow only the matching case.",
        branches=[
            _branch(f"the middle shape is a {_other_shape(mid['shape'])}", "describe its colour."),
            _branch(f"the middle shape is a {mid['shape']}", None, active=True),
        ],
        task="write a two-line product caption for a poster of this image.",
        tasks=[("platform_copywriting", "Write a caption grounded in the image.")],
        constraints=[
            sentence_count(2, 2),
            keywords([s["color"] for s in row]),
            fixed_closing("#ShapesInARow"),
        ],
        reference=(f"Three bold shapes stand in a tidy row: {row[0]['color']}, {row[1]['color']} and "
                   f"{row[2]['color']}.\nHang it up and let the {row[1]['shape']} in the middle keep the peace "
                   "#ShapesInARow"),
        ground_truth=f"The middle shape is the {mid['name']}.",
    ))

    # ---- i02: one shape in each corner
    p, im = img["i02"]
    ev, media = _image_evidence(im), _image_media(p)
    corners = ["top-left", "top-right", "bottom-left", "bottom-right"]
    at = _objects_by_pos(im)
    items.append(_item(
        "i02-single-1", media=media,
        task="Which shape is in which corner?",
        tasks=[("spatial_arrangement_description", "Map each corner to its shape.")],
        constraints=[
            table(4, ["corner", "shape", "color"]),
            markdown(["table"]),
            judge("spatial_grouping", "Order the rows from the top row to the bottom row, left before right.",
                  {"order": "top to bottom, left to right"}, ev),
        ],
        reference="| corner | shape | color |\n|---|---|---|\n" + "\n".join(
            f"| {c} | {at[c]['shape']} | {at[c]['color']} |" for c in corners),
        ground_truth=im["summary"],
    ))
    items.append(_item(
        "i02-multi-1", media=media, structure="multi",
        task="Answer two questions: which shape is in the top-left corner, and what colour is the shape in the "
             "bottom-right corner?",
        tasks=[("spatial_arrangement_description", "Name the top-left shape."),
               ("spatial_arrangement_description", "Give the bottom-right colour.")],
        constraints=[
            json_(["top_left_shape", "bottom_right_color"]),
            vif_json(["top_left_shape", "bottom_right_color"], forbidden_keys=["explanation"]),
            letter_case("lower"),
        ],
        reference=json.dumps({"top_left_shape": at["top-left"]["shape"],
                              "bottom_right_color": at["bottom-right"]["color"]}),
        ground_truth=f"{_cap(at['top-left']['shape'])}; {at['bottom-right']['color']}.",
    ))
    tl, br = at["top-left"], at["bottom-right"]
    items.append(_item(
        "i02-selection-1", media=media, structure="selection",
        preamble="Check where the shapes are and carry out only the matching case.",
        branches=[
            _branch(f"the {tl['name']} is in the bottom-right corner", "describe the top row."),
            _branch(f"the {tl['name']} is in the top-left corner", None, active=True),
        ],
        task="describe the diagonal that runs from the top-left corner to the bottom-right corner.",
        tasks=[("spatial_arrangement_description", "Describe the diagonal.")],
        constraints=[
            word_count(10, 30),
            keywords([tl["name"], br["name"]]),
            no_contractions(),
        ],
        reference=(f"The diagonal starts with the {tl['name']} in the top-left corner and ends with the "
                   f"{br['name']} in the bottom-right corner; the middle of the image is empty."),
        ground_truth=f"{_cap(tl['name'])} to {br['name']}.",
    ))

    # ---- i03: colour counts
    p, im = img["i03"]
    ev, media = _image_evidence(im), _image_media(p)
    (major, n_major), (minor, n_minor) = sorted(im["count_by_color"].items(), key=lambda kv: -kv[1])
    items.append(_item(
        "i03-single-1", media=media,
        task="How many shapes of each colour are in the image?",
        tasks=[("spatial_arrangement_description", "Count the shapes per colour.")],
        constraints=[
            csv_(["color", "count"], 2),
            table(2, ["color", "count"], formats=("csv",)),
            letter_case("lower"),
        ],
        reference=f"color,count\n{major},{n_major}\n{minor},{n_minor}",
        ground_truth=f"{n_major} {major}, {n_minor} {minor}.",
    ))
    wrong_n = n_major + 1
    items.append(_item(
        "i03-nested-1", media=media, structure="nested",
        preamble="Count the shapes by colour, then follow the single true path of cases.",
        branches=[
            _branch(f"there are more {minor} shapes than {major} ones", f"list the {minor} shapes."),
            _branch(f"there are more {major} shapes than {minor} ones", "check the cases below.", active=True,
                    branches=[
                        _branch(f"there are exactly {n_major} {major} shapes", None, active=True),
                        _branch(f"there are exactly {wrong_n} {major} shapes", "say where the extra one is."),
                    ]),
        ],
        task=f"list every {major} shape with its position.",
        tasks=[("spatial_arrangement_description", f"List the {major} shapes and their positions.")],
        constraints=[
            bullets(n_major),
            list_count(n_major, n_major),
            keywords([major], min_occurrences=n_major, max_occurrences=n_major),
            forbidden([minor]),
        ],
        reference="\n".join(f"- {o['name']} {_WHERE[o['position']]}" for o in im["objects"] if o["color"] == major),
        ground_truth=", ".join(o["name"] for o in im["objects"] if o["color"] == major),
    ))

    # ---- i04: STOP label
    p, im = img["i04"]
    ev, media = _image_evidence(im), _image_media(p)
    o = im["objects"][0]
    word = im["text"][0]
    items.append(_item(
        "i04-single-1", media=media,
        task="What word is written in the image, and where?",
        tasks=[("text_recognition", "Read the text in the image.")],
        constraints=[
            verbatim(word),
            word_count(5, 20),
            include([word]),
        ],
        reference=f'The image shows the word "{word}" written at the bottom, below the {o["name"]}.',
        ground_truth=word,
    ))
    items.append(_item(
        "i04-multi-1", media=media, structure="multi",
        task="Answer two questions: what text appears, and what shape is above it?",
        tasks=[("text_recognition", "Read the text."),
               ("object_relationship", "Say what lies above the text.")],
        constraints=[
            paragraph_count_vif(2, 2),
            lexical([o["shape"]], 1),
            judge("tone", "Use a formal tone.", {"tone": "formal"}, ev),
        ],
        reference=(f"The text in the image reads {word}.\n\n"
                   f"Directly above it, in the center of the image, there is {_a(o['name'])}."),
        ground_truth=f"{word}; {_a(o['name'])}.",
    ))

    # ---- i05: EXIT 7
    p, im = img["i05"]
    ev, media = _image_evidence(im), _image_media(p)
    sign = im["text"][0]
    number = next(tok for tok in sign.split() if tok.isdigit())
    left_o, right_o = _objects_by_pos(im)["left"], _objects_by_pos(im)["right"]
    items.append(_item(
        "i05-single-1", media=media,
        task="Transcribe the sign in the image.",
        tasks=[("text_recognition", "Read the sign.")],
        constraints=[
            verbatim(sign),
            response_length(3, 15),
            fixed_opening("The sign says"),
        ],
        reference=f'The sign says "{sign}" in black letters at the top.',
        ground_truth=sign,
    ))
    items.append(_item(
        "i05-selection-1", media=media, structure="selection",
        preamble="Read the text at the top and follow the one matching case.",
        branches=[
            _branch("the text contains no digits", "spell the text backwards."),
            _branch("the text contains a number", None, active=True),
            _branch("there is no text", "describe the two shapes."),
        ],
        task="give the number and say which shapes flank it below.",
        tasks=[("text_recognition", "Read the number."), ("spatial_arrangement_description",
                                                          "Describe the shapes below the text.")],
        constraints=[
            bullets(2),
            prefix_label("Answer:"),
            exclude(["exit"]),
        ],
        reference=(f"- Answer: the number is {number}.\n"
                   f"- Answer: {_a(left_o['name'])} sits on the left and {_a(right_o['name'])} on the right."),
        ground_truth=number,
    ))
    items.append(_item(
        "i05-multi-1", media=media, structure="multi",
        task="Answer two questions: what does the text at the top say, and what colour is the shape on the right?",
        tasks=[("text_recognition", "Read the text."), ("spatial_arrangement_description",
                                                        "Give the colour of the right shape.")],
        constraints=[
            numbered(2),
            item_count(2, 2, "numbered"),
            exclude(["sign", "signs"]),
        ],
        reference=f"1. The text at the top says {sign}.\n2. The shape on the right is {right_o['color']}.",
        ground_truth=f"{sign}; {right_o['color']}.",
    ))

    # ---- i06: six shapes in two rows
    p, im = img["i06"]
    ev, media = _image_evidence(im), _image_media(p)
    top_row = [o for o in im["objects"] if o["position"].startswith("top")]
    bottom_row = [o for o in im["objects"] if o["position"].startswith("bottom")]
    items.append(_item(
        "i06-single-1", media=media,
        task="Describe both rows of shapes.",
        tasks=[("spatial_arrangement_description", "Describe the two rows.")],
        constraints=[
            markdown(["heading", "list"]),
            item_count(6, 6, "bullet"),
            letter_case("lower", scope="items"),
            judge("hierarchical", "Go from the rows to the individual shapes.", {"direction": "general_to_specific"}, ev),
        ],
        reference=("## Top row\n" + "\n".join(f"- {o['name']}" for o in top_row)
                   + "\n\n## Bottom row\n" + "\n".join(f"- {o['name']}" for o in bottom_row)),
        ground_truth=im["summary"],
    ))
    shape_counts = im["count_by_shape"]
    most = sorted(s for s, n in shape_counts.items() if n == max(shape_counts.values()))
    items.append(_item(
        "i06-multi-1", media=media, structure="multi",
        task="Answer two questions: how many shapes of each kind are there, and which kind appears most often?",
        tasks=[("spatial_arrangement_description", "Count the shapes by kind."),
               ("spatial_arrangement_description", "Name the most frequent kind.")],
        constraints=[
            ordered_list(len(shape_counts) + 1),
            labels(sorted(shape_counts)),
            exclude(["several"]),
        ],
        reference=("\n".join(f"- {s}: {n}" for s, n in sorted(shape_counts.items()))
                   + "\n- most frequent: " + " and ".join(most) + (" (a tie)" if len(most) > 1 else "")),
        ground_truth=(", ".join(f"{n} {s}" for s, n in sorted(shape_counts.items()))
                      + "; most frequent: " + " and ".join(most)),
    ))

    # ---- i07: four circles and a number
    p, im = img["i07"]
    ev, media = _image_evidence(im), _image_media(p)
    num = im["text"][0]
    shp = im["objects"][0]["shape"]  # all four are the same shape
    items.append(_item(
        "i07-single-1", media=media,
        task="What number is written in the center of the image?",
        tasks=[("text_recognition", "Read the number.")],
        constraints=[
            value_format("Reply with the number only, in digits.", patterns=[r"\d+"]),
            response_length(1, 1),
        ],
        reference=num,
        ground_truth=num,
    ))
    parity = "even" if int(num) % 2 == 0 else "odd"
    items.append(_item(
        "i07-selection-1", media=media, structure="selection",
        preamble="Read the number in the center and follow only the matching case.",
        branches=[
            _branch("the number is greater than 100", "write it in words."),
            _branch(f"the number is {'odd' if parity == 'even' else 'even'} and at most 100", "add one to it."),
            _branch(f"the number is {parity} and at most 100", None, active=True),
            _branch("there is no number", f"describe the {shp}s."),
        ],
        task=f"split the number into two equal halves and explain which {shp}s surround it.",
        tasks=[("text_recognition", "Read the number."), ("object_relationship", f"Relate the {shp}s to the number.")],
        constraints=[
            sentence_count(2, 3),
            keywords([num]),
            lexical([shp, f"{shp}s"], 1),
            no_contractions(),
        ],
        reference=(f"The number {num} splits into two halves of {int(num) / 2:g} each. "
                   f"{_cap(_NUMBER_WORDS[len(im['objects'])])} {shp}s surround it, "
                   "one in every corner of the image."),
        ground_truth=f"{num}, surrounded by {_NUMBER_WORDS[len(im['objects'])]} {shp}s.",
    ))
    at7 = _objects_by_pos(im)
    items.append(_item(
        "i07-multi-1", media=media, structure="multi",
        task=f"Answer two questions: how many {shp}s are there, and what colour is the one in the top-right corner?",
        tasks=[("spatial_arrangement_description", f"Count the {shp}s."),
               ("spatial_arrangement_description", "Give the top-right colour.")],
        constraints=[
            vif_json(["count", "top_right_color"], {"count": 0, "top_right_color": ""}),
            value_format("Give the count in digits and the colour as one lowercase word.",
                         patterns=[r"\d+"], values=list(PALETTE)),
            forbidden(["approximately", "about"]),
        ],
        reference=json.dumps({"count": len(im["objects"]), "top_right_color": at7["top-right"]["color"]}),
        ground_truth=f"{len(im['objects'])}; {at7['top-right']['color']}.",
    ))

    # ---- i08: opening hours
    p, im = img["i08"]
    ev, media = _image_evidence(im), _image_media(p)
    open_word, time_text = im["text"]
    items.append(_item(
        "i08-single-1", media=media,
        task="Read the time written at the bottom of the image.",
        tasks=[("text_recognition", "Read the time.")],
        constraints=[
            verbatim(time_text),
            sentence_count(1, 1),
            keywords(["bottom"]),
        ],
        reference=f'At the bottom of the image it says "{time_text}".',
        ground_truth=time_text,
    ))
    items.append(_item(
        "i08-multi-1", media=media, structure="multi",
        task="Answer two questions: what do the two texts say together, and which shapes are on each side?",
        tasks=[("text_recognition", "Read both texts."), ("spatial_arrangement_description", "Name the side shapes.")],
        constraints=[
            fixed_opening("Notice:"),
            word_count(15, 40),
            include([open_word, time_text]),
            judge("content_inclusion", "Mention both side shapes with their sides.",
                  {"items": [o["name"] for o in im["objects"]]}, ev,
                  subs=[f"Does the response place the {o['name']} {_WHERE[o['position']]}?" for o in im["objects"]]),
        ],
        reference=(f"Notice: the texts say {open_word} at the top and {time_text} at the bottom, so it reads "
                   f"{open_word} {time_text}. " + " and ".join(
                       f"{_cap(_a(o['name'])) if k == 0 else _a(o['name'])} is {_WHERE[o['position']]}"
                       for k, o in enumerate(im["objects"])) + "."),
        ground_truth=f"{open_word} {time_text}.",
    ))
    return items
