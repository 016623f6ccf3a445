"""Controls declared once, rendered as widgets and bound to the URL query string.

Each control knows its name (the URL key), its default and its domain. ``parse`` turns a URL
value back into a Python value and raises ``ValueError`` with a reason when it cannot;
``encode`` does the opposite. ``render`` draws the widget, whose state lives under a
page-prefixed session key.
"""

from __future__ import annotations

import dataclasses
import math
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

__all__ = [
    "Choice",
    "Control",
    "FloatSlider",
    "IntSlider",
    "MultiChoice",
    "Number",
    "Params",
    "Section",
    "Seed",
    "SelectSlider",
    "Table",
    "TableColumn",
    "Text",
    "Toggle",
]

MAX_SEED = 2**31 - 1


class Params(Mapping[str, Any]):
    """Read-only control values, by name or as attributes (``p.gamma``)."""

    def __init__(self, values: Mapping[str, Any]):
        self._values = dict(values)

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError as err:
            raise AttributeError(name) from err

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Params({self._values!r})"


def _label_of(labels: Mapping[Any, str] | Callable[[Any], str] | None) -> Callable[[Any], str]:
    if labels is None:
        return str
    if callable(labels):
        return labels
    return lambda v: labels.get(v, str(v))


@dataclass(frozen=True, kw_only=True)
class Control:
    """Base of all controls.

    Attributes:
        name: URL key and the name under which the value is returned.
        label: Widget label.
        help: Tooltip.
        disabled: Draw the widget greyed out (its value still counts).
        scales_work: The value is a count that scales the page's work (runs, episodes, steps,
            sweeps, sizes). Widget fuzzing keeps it at or below its default; the suite tries
            every such count at its maximum at once (``tests/test_worst_cases.py``).
    """

    name: str
    label: str
    help: str | None = None
    disabled: bool = False
    scales_work: bool = False

    @property
    def default(self) -> Any:
        raise NotImplementedError

    def parse(self, raw: str) -> Any:
        """URL text to value; raises ValueError with the reason."""
        raise NotImplementedError

    def encode(self, value: Any) -> str:
        """Value to URL text."""
        return str(value)

    def render(self, key: str, value: Any = None) -> Any:
        """Draw the widget (its state is already in ``st.session_state[key]``).

        ``value`` is that state when this run did not set it: a slider given its value need
        not read the whole session state to learn whether it is one value or a range.
        """
        raise NotImplementedError

    def locked(self) -> Control:
        """The same control drawn disabled (a teacher link's locked value): ``locked().render``."""
        return dataclasses.replace(self, disabled=True)

    def describe(self) -> str:
        """The domain, for notices."""
        return ""


def _parse_float(raw: str) -> float:
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise ValueError("not a number") from None
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


def _parse_int(raw: str) -> int:
    try:
        return int(str(raw).strip())
    except (TypeError, ValueError):
        raise ValueError("not a whole number") from None


def _fmt_float(value: float) -> str:
    return f"{float(value):.10g}"


@dataclass(frozen=True, kw_only=True)
class FloatSlider(Control):
    """A slider over real numbers."""

    min: float
    max: float
    value: float
    step: float = 0.01
    format: str | None = None

    @property
    def default(self) -> float:
        return float(self.value)

    def parse(self, raw: str) -> float:
        value = _parse_float(raw)
        if not self.min <= value <= self.max:
            raise ValueError(f"outside [{_fmt_float(self.min)}, {_fmt_float(self.max)}]")
        return value

    def encode(self, value: Any) -> str:
        return _fmt_float(value)

    def describe(self) -> str:
        return f"a number in [{_fmt_float(self.min)}, {_fmt_float(self.max)}]"

    def render(self, key: str, value: Any = None) -> float:
        return st.slider(
            self.label, min_value=float(self.min), max_value=float(self.max),
            step=float(self.step), format=self.format, key=key, help=self.help,
            disabled=self.disabled, value=value,
        )


@dataclass(frozen=True, kw_only=True)
class IntSlider(Control):
    """A slider over whole numbers."""

    min: int
    max: int
    value: int
    step: int = 1

    @property
    def default(self) -> int:
        return int(self.value)

    def parse(self, raw: str) -> int:
        value = _parse_int(raw)
        if not self.min <= value <= self.max:
            raise ValueError(f"outside [{self.min}, {self.max}]")
        return value

    def describe(self) -> str:
        return f"a whole number in [{self.min}, {self.max}]"

    def render(self, key: str, value: Any = None) -> int:
        return st.slider(
            self.label, min_value=int(self.min), max_value=int(self.max), step=int(self.step),
            key=key, help=self.help, disabled=self.disabled, value=value,
        )


@dataclass(frozen=True, kw_only=True)
class Number(Control):
    """A number box, for values with a wide range (integers when ``integer`` is set)."""

    min: float
    max: float
    value: float
    step: float = 1.0
    integer: bool = False
    format: str | None = None

    @property
    def default(self) -> float | int:
        return int(self.value) if self.integer else float(self.value)

    def parse(self, raw: str) -> float | int:
        value = _parse_int(raw) if self.integer else _parse_float(raw)
        if not self.min <= value <= self.max:
            raise ValueError(f"outside [{_fmt_float(self.min)}, {_fmt_float(self.max)}]")
        return value

    def encode(self, value: Any) -> str:
        return str(int(value)) if self.integer else _fmt_float(value)

    def describe(self) -> str:
        kind = "a whole number" if self.integer else "a number"
        return f"{kind} in [{_fmt_float(self.min)}, {_fmt_float(self.max)}]"

    def render(self, key: str, value: Any = None) -> float | int:
        if self.integer:
            return st.number_input(
                self.label, min_value=int(self.min), max_value=int(self.max),
                step=int(self.step), key=key, help=self.help, disabled=self.disabled,
            )
        return st.number_input(
            self.label, min_value=float(self.min), max_value=float(self.max),
            step=float(self.step), format=self.format, key=key, help=self.help,
            disabled=self.disabled,
        )


@dataclass(frozen=True, kw_only=True)
class Seed(Number):
    """The random seed of a stochastic page, with a button that draws a fresh one."""

    name: str = "seed"
    label: str = "Seed"
    help: str | None = "Same seed, same result: share the link to share the exact run."
    min: float = 0
    max: float = MAX_SEED
    value: float = 0
    integer: bool = True

    def render(self, key: str, value: Any = None) -> int:
        def reroll() -> None:
            # A fresh seed in [0, 10000), never the current one.
            current = st.session_state.get(key)
            new = secrets.randbelow(9_999)
            st.session_state[key] = new + 1 if current is not None and new >= current else new

        # One row (a block, not columns: a rerun sends one message for it, not three).
        with st.container(horizontal=True, vertical_alignment="bottom", gap="small"):
            seed = super().render(key, value)
            st.button(
                "", icon=":material/casino:", key=f"{key}.reroll", on_click=reroll,
                help="Draw a new seed", disabled=self.disabled,
            )
        return seed


@dataclass(frozen=True, kw_only=True)
class Choice(Control):
    """One of a fixed set of options (a select box, or radio buttons for a few)."""

    options: Sequence[Any]
    value: Any
    labels: Mapping[Any, str] | Callable[[Any], str] | None = None
    widget: str = "select"  # "select" | "radio" | "segmented"
    on_change: Callable[[], None] | None = None
    """Called when a person picks another option (not when a link sets it), before the rerun;
    it may write other controls' values to ``st.session_state`` (e.g. a preset's settings)."""

    def __post_init__(self) -> None:
        if self.value not in self.options:
            raise ValueError(f"default {self.value!r} of {self.name!r} is not an option")

    @property
    def default(self) -> Any:
        return self.value

    def parse(self, raw: str) -> Any:
        for option in self.options:
            if str(option) == raw:
                return option
        raise ValueError("not one of the options")

    def describe(self) -> str:
        return "one of " + ", ".join(str(o) for o in self.options)

    def render(self, key: str, value: Any = None) -> Any:
        fmt = _label_of(self.labels)
        if self.widget == "radio":
            return st.radio(
                self.label, self.options, format_func=fmt, key=key, help=self.help,
                horizontal=True, disabled=self.disabled, on_change=self.on_change,
            )
        if self.widget == "segmented":
            value = st.segmented_control(
                self.label, self.options, format_func=fmt, key=key, help=self.help,
                selection_mode="single", disabled=self.disabled, required=True,
                on_change=self.on_change,
            )
            return self.value if value is None else value
        return st.selectbox(
            self.label, self.options, format_func=fmt, key=key, help=self.help,
            disabled=self.disabled, on_change=self.on_change,
        )


@dataclass(frozen=True, kw_only=True)
class SelectSlider(Control):
    """A slider over an ordered list of values (for log-spaced settings such as θ)."""

    options: Sequence[Any]
    value: Any
    labels: Mapping[Any, str] | Callable[[Any], str] | None = None

    def __post_init__(self) -> None:
        if self.value not in self.options:
            raise ValueError(f"default {self.value!r} of {self.name!r} is not an option")

    @property
    def default(self) -> Any:
        return self.value

    def parse(self, raw: str) -> Any:
        for option in self.options:
            if str(option) == raw:
                return option
        try:
            number = float(raw)
        except ValueError:
            number = None
        if number is not None:
            for option in self.options:
                if isinstance(option, int | float) and math.isclose(
                    float(option), number, rel_tol=1e-9
                ):
                    return option
        raise ValueError("not one of the slider's values")

    def describe(self) -> str:
        return "one of " + ", ".join(str(o) for o in self.options)

    def render(self, key: str, value: Any = None) -> Any:
        return st.select_slider(
            self.label, options=list(self.options), format_func=_label_of(self.labels),
            key=key, help=self.help, disabled=self.disabled,
        )


@dataclass(frozen=True, kw_only=True)
class MultiChoice(Control):
    """Several of a fixed set of options (comma-separated in the URL)."""

    options: Sequence[Any]
    value: Sequence[Any] = ()
    labels: Mapping[Any, str] | Callable[[Any], str] | None = None
    max_selections: int | None = None

    @property
    def default(self) -> list[Any]:
        return list(self.value)

    def parse(self, raw: str) -> list[Any]:
        chosen: list[Any] = []
        # Reasons name positions, not the text: the notice already quotes the link's value.
        for i, part in enumerate((p.strip() for p in str(raw).split(",")), start=1):
            if not part:
                continue
            match = [o for o in self.options if str(o) == part]
            if not match:
                raise ValueError(f"item {i} is not one of the options")
            if match[0] not in chosen:
                chosen.append(match[0])
        if self.max_selections is not None and len(chosen) > self.max_selections:
            raise ValueError(f"at most {self.max_selections} may be chosen")
        return chosen

    def encode(self, value: Any) -> str:
        return ",".join(str(v) for v in value)

    def describe(self) -> str:
        return "a comma-separated list of " + ", ".join(str(o) for o in self.options)

    def render(self, key: str, value: Any = None) -> list[Any]:
        return st.multiselect(
            self.label, list(self.options), format_func=_label_of(self.labels), key=key,
            help=self.help, max_selections=self.max_selections, disabled=self.disabled,
        )


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


@dataclass(frozen=True, kw_only=True)
class Toggle(Control):
    """An on/off switch (``1``/``0`` in the URL)."""

    value: bool = False

    @property
    def default(self) -> bool:
        return bool(self.value)

    def parse(self, raw: str) -> bool:
        text = str(raw).strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
        raise ValueError("not on/off (use 1 or 0)")

    def encode(self, value: Any) -> str:
        return "1" if value else "0"

    def describe(self) -> str:
        return "1 or 0"

    def render(self, key: str, value: Any = None) -> bool:
        return st.toggle(self.label, key=key, help=self.help, disabled=self.disabled)


@dataclass(frozen=True, kw_only=True)
class Text(Control):
    """Free text (a grid layout, a list of numbers), capped in length."""

    value: str = ""
    max_chars: int = 4000
    area: bool = True
    height: int | None = None
    placeholder: str | None = None

    @property
    def default(self) -> str:
        return self.value

    def parse(self, raw: str) -> str:
        text = str(raw)
        if len(text) > self.max_chars:
            raise ValueError(f"longer than {self.max_chars} characters")
        return text

    def describe(self) -> str:
        return f"text of at most {self.max_chars} characters"

    def render(self, key: str, value: Any = None) -> str:
        if self.area:
            return st.text_area(
                self.label, key=key, help=self.help, max_chars=self.max_chars,
                height=self.height, placeholder=self.placeholder, disabled=self.disabled,
            )
        return st.text_input(
            self.label, key=key, help=self.help, max_chars=self.max_chars,
            placeholder=self.placeholder, disabled=self.disabled,
        )


@dataclass(frozen=True)
class TableColumn:
    """One column of a ``Table``: numbers (``"float"``) or flags (``"bool"``)."""

    name: str
    label: str
    kind: str = "float"
    help: str | None = None


@dataclass(frozen=True, kw_only=True)
class Table(Control):
    """An editable table (``st.data_editor``) whose contents live in the URL.

    The value is a dict of column name -> list, all the same length. Float cells may be NaN
    (an emptied cell); the library that receives them says what is wrong, so a user sees a
    clear message rather than a silently repaired table. URL form: ``r=1,0,2;done=0,0,1``.
    Another widget can replace the table (a preset button): write the new dict to
    ``st.session_state[page.key(name)]`` in its callback.
    """

    columns: Sequence[TableColumn]
    value: Mapping[str, Sequence[Any]]
    max_rows: int = 64
    height: int | None = None

    @property
    def default(self) -> dict[str, list]:
        return {c.name: list(self.value[c.name]) for c in self.columns}

    def _coerce(self, column: TableColumn, items: Sequence[Any]) -> list:
        if column.kind == "bool":
            return [bool(x) if x is not None and x == x else False for x in items]
        out = []
        for x in items:
            try:
                out.append(float(x) if x is not None else math.nan)
            except (TypeError, ValueError):
                out.append(math.nan)
        return out

    def parse(self, raw: str) -> dict[str, list]:
        parts: dict[str, list] = {}
        for chunk in str(raw).split(";"):
            if not chunk.strip():
                continue
            name, sep, body = chunk.partition("=")
            column = next((c for c in self.columns if c.name == name.strip()), None)
            if column is None or not sep:
                known = ", ".join(c.name for c in self.columns)
                raise ValueError(f"a part is not one of the columns ({known}) as name=values")
            cells = [x.strip() for x in body.split(",")] if body.strip() else []
            if column.kind == "bool":
                if any(x not in _TRUE | _FALSE for x in (c.lower() for c in cells)):
                    raise ValueError(f"column {column.name!r} takes 1 or 0")
                parts[column.name] = [x.lower() in _TRUE for x in cells]
            else:
                try:
                    parts[column.name] = [float(x) for x in cells]
                except ValueError:
                    raise ValueError(f"column {column.name!r} has a non-number") from None
        missing = [c.name for c in self.columns if c.name not in parts]
        if missing:
            raise ValueError(f"missing column(s) {', '.join(missing)}")
        lengths = {len(v) for v in parts.values()}
        if len(lengths) != 1:
            raise ValueError("columns have different lengths")
        if lengths.pop() > self.max_rows:
            raise ValueError(f"more than {self.max_rows} rows")
        return parts

    def encode(self, value: Any) -> str:
        chunks = []
        for c in self.columns:
            items = value[c.name]
            if c.kind == "bool":
                body = ",".join("1" if x else "0" for x in items)
            else:
                body = ",".join(_fmt_float(x) for x in items)
            chunks.append(f"{c.name}={body}")
        return ";".join(chunks)

    def describe(self) -> str:
        names = ", ".join(c.name for c in self.columns)
        return f"columns {names} as name=v1,v2,…; separated by ';' (at most {self.max_rows} rows)"

    def render(self, key: str, value: Any = None) -> dict[str, list]:
        import pandas as pd

        state = st.session_state
        current = state[key]
        # A new base (and a fresh editor) whenever the value was replaced from outside the
        # editor: first run, a link, a preset button, reset.
        if state.get(f"{key}.last") != current or f"{key}.base" not in state:
            state[f"{key}.base"] = current
            state[f"{key}.version"] = state.get(f"{key}.version", 0) + 1
        version = state[f"{key}.version"]
        made = state.get(f"{key}.frame")
        if made is None or made[0] != version:
            # Built once per base, not on every rerun (the editor copies it before editing).
            frame = pd.DataFrame({  # typed columns, so an empty table has checkbox columns
                c.name: pd.Series(state[f"{key}.base"][c.name],
                                  dtype=bool if c.kind == "bool" else float)
                for c in self.columns
            })
            made = state[f"{key}.frame"] = (version, frame)
        base = made[1]
        config = {
            c.name: (
                st.column_config.CheckboxColumn(c.label, help=c.help, default=False)
                if c.kind == "bool"
                else st.column_config.NumberColumn(c.label, help=c.help, format="%.4g")
            )
            for c in self.columns
        }
        edited = st.data_editor(
            base, key=f"{key}.editor.{version}", num_rows="dynamic",
            column_config=config, hide_index=False, disabled=self.disabled,
            height=self.height if self.height is not None else "auto",
        )
        if self.label:
            st.caption(self.label)
        value = {
            c.name: self._coerce(c, list(edited[c.name]))[: self.max_rows] for c in self.columns
        }
        if len(edited) > self.max_rows:
            st.caption(f"Only the first {self.max_rows} rows are used.")
        state[key] = value
        state[f"{key}.last"] = value
        return value


@dataclass(frozen=True)
class Section:
    """A titled group of controls, drawn in a sidebar expander."""

    title: str
    controls: Sequence[Control] = field(default_factory=tuple)
    expanded: bool = False
