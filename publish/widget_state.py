"""A lesson's widgets as a printed page shows them: the picture each drew, its text, its settings.

A lesson run with nbclient keeps every widget's state in the notebook (``metadata.widgets``:
each model's properties, an image's bytes among them). In JupyterLab that state is redrawn live;
on a static page (the book, the slides) there is no kernel and no widget manager, so
:func:`static_outputs` replaces each widget output of a code cell with one HTML output holding
what the widget showed when the lesson ran: its HTML texts (title, summary, a quiz's question), a
line of its controls' settings, and its pictures as ``<img>`` with the alt text of
publish/alt_text.py. A quiz's unanswered choices are listed; buttons are left out (there is
nothing to press on paper), and so are a quiz's answers (its feedback is empty until someone
checks).

Only the widget models' documented state is read (the Jupyter widget state schema, version 2).
"""

from __future__ import annotations

import base64
import copy
import html
import re
from dataclasses import dataclass, field

import nbformat

from publish.alt_text import ALT_TEXT

STATE = "application/vnd.jupyter.widget-state+json"
VIEW = "application/vnd.jupyter.widget-view+json"
_CALL = re.compile(r"\b(\w+)\(")


@dataclass
class Shown:
    """What one widget showed: HTML blocks and pictures in page order, and its settings."""
    widget: str
    parts: list[tuple[str, str]] = field(default_factory=list)  # ("html", text) or ("img", tag)
    settings: list[tuple[str, str]] = field(default_factory=list)
    images: int = 0


def _models(notebook: nbformat.NotebookNode) -> dict:
    state = notebook.metadata.get("widgets", {}).get(STATE)
    if not state:
        raise ValueError("the notebook has no saved widget state: run it with nbclient "
                         "(store_widget_state=True), as benchmarks/kernel_memory.py --keep does")
    return state["state"]


def _buffer(model: dict, name: str) -> bytes:
    for buffer in model.get("buffers", []):
        if buffer["path"] == [name]:
            if buffer.get("encoding", "base64") != "base64":
                raise ValueError(f"unexpected buffer encoding {buffer['encoding']!r}")
            return base64.b64decode(buffer["data"])
    value = model["state"].get(name, "")
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def _setting(model: dict) -> tuple[str, str] | None:
    """(description, shown value) of a control, or None when it is not one."""
    state = model["state"]
    description = html.unescape(str(state.get("description", ""))).strip().rstrip(":")
    labels = state.get("_options_labels")
    if labels is not None:
        index = state.get("index")
        if isinstance(index, (list, tuple)):
            value = ", ".join(labels[i] for i in index)
        elif index is None:
            value = "(none)"
        else:
            value = labels[index]
    elif "value" in state and model["model_name"] not in ("HTMLModel", "LabelModel", "HTMLMathModel"):
        value = state["value"]
        value = f"{value:g}" if isinstance(value, float) else str(value)
    else:
        return None
    return description, value


def shown(notebook: nbformat.NotebookNode, model_id: str, widget: str) -> Shown:
    """What the widget whose top model is ``model_id`` showed, walking its children in order."""
    models, result = _models(notebook), Shown(widget)

    def walk(identifier: str) -> None:
        model = models[identifier]
        name, state = model["model_name"], model["state"]
        if state.get("layout") and models.get(state["layout"].removeprefix("IPY_MODEL_"), {}) \
                .get("state", {}).get("display") == "none":
            return  # hidden (an explorer with no picture this time hides its Image)
        if name in ("HTMLModel", "HTMLMathModel", "LabelModel"):
            if str(state.get("value", "")).strip():
                result.parts.append(("html", str(state["value"])))
        elif name == "ImageModel":
            data = _buffer(model, "value")
            if data:
                result.images += 1
                result.parts.append(("img", _image_tag(state.get("format", "png"), data,
                                                       state.get("width", ""), widget)))
        elif name in ("ButtonModel", "OutputModel"):
            return
        elif name in ("RadioButtonsModel", "ToggleButtonsModel") and state.get("index") is None:
            # A question's choices (a quiz nobody has answered): listed, for the reader to pick.
            items = "".join(f"<li>{html.escape(str(label))}</li>" for label in state.get("_options_labels", []))
            result.parts.append(("html", f'<ol class="widget-choices" type="A">{items}</ol>'))
        elif "children" in state:
            for child in state["children"]:
                walk(child.removeprefix("IPY_MODEL_"))
        else:
            setting = _setting(model)
            if setting:
                result.settings.append(setting)

    walk(model_id)
    return result


def alt_text(widget: str) -> str:
    try:
        return ALT_TEXT[widget]
    except KeyError:
        raise ValueError(f"widget {widget!r} draws a picture but publish/alt_text.py has no alt "
                         "text for it: add one") from None


def _image_tag(kind: str, data: bytes, width: str, widget: str) -> str:
    mime = "image/svg+xml" if kind == "svg+xml" else f"image/{kind}"
    style = f' style="max-width:100%;width:{html.escape(width)}"' if width else ' style="max-width:100%"'
    return (f'<img class="widget-figure" alt="{html.escape(alt_text(widget))}"{style} '
            f'src="data:{mime};base64,{base64.b64encode(data).decode("ascii")}">')


def figure_html(what: Shown) -> str:
    """The widget as a static HTML block: its texts and pictures in order, settings after."""
    body = []
    for kind, value in what.parts:
        body.append(f'<figure class="widget-image">{value}</figure>' if kind == "img"
                    else f'<div class="widget-text">{value}</div>')
    if what.settings:
        items = "; ".join(f"{html.escape(d)} = {html.escape(v)}" if d else html.escape(v)
                          for d, v in what.settings)
        body.append(f'<p class="widget-settings">Shown with: {items}.</p>')
    return f'<div class="static-widget" data-widget="{html.escape(what.widget)}">' + "".join(body) + "</div>"


def widgets_called(source: str, names: set[str]) -> list[str]:
    return [n for n in _CALL.findall(source) if n in names]


def static_outputs(notebook: nbformat.NotebookNode, names: set[str]) -> tuple[nbformat.NotebookNode, list[Shown]]:
    """A copy of ``notebook`` whose widget outputs are static HTML (see the module docstring),
    and what each widget showed. ``names`` are the widget functions (``accelkit.widgets``)."""
    notebook = copy.deepcopy(notebook)
    found = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        views = [o for o in cell.get("outputs", []) if VIEW in o.get("data", {})]
        if not views:
            continue
        called = widgets_called(cell.source, names)
        if len(called) != len(views):
            raise ValueError(f"cell {index}: {len(views)} widget outputs but calls {called}: "
                             "publish/widget_state.py maps one widget call to one output")
        outputs, pending = [], iter(called)
        for output in cell.outputs:
            if VIEW not in output.get("data", {}):
                outputs.append(output)
                continue
            what = shown(notebook, output["data"][VIEW]["model_id"], next(pending))
            found.append(what)
            outputs.append(nbformat.v4.new_output("display_data", data={"text/html": figure_html(what)}))
        cell.outputs = outputs
    notebook.metadata.pop("widgets", None)
    return notebook, found
