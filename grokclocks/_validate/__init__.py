"""Argument checks shared by every module: one place, one message style.

Every public function of the core validates its arguments through these helpers, so that an
invalid input raises `DomainError` naming the parameter, the offending value and the valid domain,
e.g. `lam must be in (0, 1) for the late-time expansion (got 1.3)`.

Conventions (docs/reliability.md):

* reals: `bool`, complex, string, datetime and object values that are not real numbers are
  rejected, as are NaN and ±inf; integers, float16/32/64 and lists of them are converted to
  float64 (`input_eps` keeps the eps of the caller's dtype for tolerances);
* integers: Python or NumPy integers, or integral floats; `bool` is not an integer; every integer
  fits in int64 unless a smaller `maximum` is given;
* flags: only `True`/`False` (`np.bool_` too), never a truthy string or number;
* a value shown in a message is one line, truncated (`show`).

One concept per private file: `_errors` (`DomainError` and its refinements, `show`), `_reals` (the float64
conversion every numeric check starts from), `_precision` (round-off tolerances in the caller's dtype),
`_domains` (signs, intervals, order, probabilities), `_integers` (integers, counts, integer and index arrays),
`_shapes` (dimensions, shapes, size limits), `_broadcasting` (the `broadcasting` decorator and the flat
engines' inputs and outputs), `_arguments` (flags, choices, sequences, callables, file paths).  Each public
name reports this package as its module, as it did when the checks were one file.
"""

from __future__ import annotations

from ._arguments import callable_, choice, file_path, flag, sequence
from ._broadcasting import broadcast_flat, broadcasting, scalar_or_array
from ._domains import in_closed_interval, in_open_interval, nonnegative, not_equal, ordered, positive, probabilities
from ._errors import _SHOW_WIDTH, _bad, _not_real, DomainError, OutputExistsError, ResultOverflow, UnknownKey, show
from ._integers import FLOAT_INTEGER_MAX, INT64_MAX, count, counts, index_array, integer_array, integer_at_least
from ._precision import input_eps, roundoff_tol
from ._reals import _converted, _forward, _INFS, _INT_FLOAT_MAX, _real_element, _scalar_if, as_float_array, finite, in_domain
from ._shapes import MAX_ELEMENTS, array_ndim, max_size, same_shape, scalar

__all__ = [
    "DomainError",
    "OutputExistsError",
    "ResultOverflow",
    "UnknownKey",
    "show",
    "as_float_array",
    "input_eps",
    "roundoff_tol",
    "positive",
    "nonnegative",
    "in_open_interval",
    "in_closed_interval",
    "finite",
    "integer_at_least",
    "count",
    "counts",
    "integer_array",
    "index_array",
    "flag",
    "choice",
    "not_equal",
    "scalar",
    "array_ndim",
    "same_shape",
    "probabilities",
    "callable_",
    "sequence",
    "max_size",
    "scalar_or_array",
    "broadcast_flat",
    "broadcasting",
    "ordered",
    "file_path",
]

for _name in __all__:  # the home of each public name stays `grokclocks._validate` (tracebacks, repr, pickling)
    globals()[_name].__module__ = __name__
del _name, annotations
