"""NaN / inf / huge values are reported by column name when the input has names."""

import numpy as np
import pandas as pd
import pytest

from madcluster.data.validation import check_series
from madcluster.exceptions import DataError


def test_nan_names_the_column():
    frame = pd.DataFrame({"cpu": [1.0, 2.0, 3.0], "requests": [1.0, np.nan, np.inf]})
    with pytest.raises(DataError, match=r"in column\(s\) \['requests'\] \(first: NaN at row 1, column 'requests'"):
        check_series(frame)


def test_arrays_still_give_the_position():
    with pytest.raises(DataError, match="column 1"):
        check_series(np.array([[1.0, np.nan]]))


def test_huge_value_names_the_column():
    frame = pd.DataFrame({"a": [1.0, 2.0], "b": [1e300, 1.0]})
    with pytest.raises(DataError, match="column 'b'"):
        check_series(frame)


def test_duplicated_dataframe_columns_are_refused_by_name():
    frame = pd.DataFrame([[1.0, 2.0, 3.0]], columns=["a", "b", "a"])
    with pytest.raises(DataError, match=r"duplicated column name\(s\) \['a'\]"):
        check_series(frame)
