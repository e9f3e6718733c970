"""Reading the tables the CLI writes (TSV, header on the first line)."""

from __future__ import annotations

import os
from typing import Any, Union

#: Columns of the CLI's tables that hold names (contigs, populations, samples, variant ids,
#: alleles, statistics): they stay text, so a population called ``NA`` stays the label "NA".
LABEL_COLUMNS = frozenset({
    "chrom", "population", "populations", "pop1", "pop2", "statistic", "id", "ref", "alt",
    "sample", "sample1", "sample2", "iid", "fid", "IID", "FID", "chr_a", "chr_b", "snp_a",
    "snp_b", "CHR_A", "CHR_B", "SNP_A", "SNP_B", "focal", "focal_id", "variant_id",
})

#: Text of a missing or non-finite value in the CLI's numeric columns.
_MISSING = ["NA", "nan", "-nan", "NaN"]


def read_table(path: Union[str, "os.PathLike[str]", Any], sep: str = "\t"):
    """A table the CLI wrote (``vczstats diversity ... -o d.tsv``) as a pandas DataFrame.

    The header is the first line (``pandas.read_csv(path, sep="\\t")`` reads it too). Label
    columns stay text: a population named ``NA`` is not a missing value, as pandas' default
    would make it; numeric columns read ``NA`` as NaN. Older files with ``# note`` lines
    before the header, and plink's ``#IID`` headers, are read too.
    """
    import pandas as pd

    skip = 0
    if isinstance(path, (str, os.PathLike)):
        with open(path) as f:
            for line in f:
                if not (line.startswith("# ") or not line.strip()):
                    break
                skip += 1
    table = pd.read_csv(path, sep=sep, skiprows=skip, dtype=str, keep_default_na=False)
    table.columns = [str(c).lstrip("#") for c in table.columns]
    for name in table.columns:
        if name in LABEL_COLUMNS:
            continue
        column = table[name]
        try:
            table[name] = pd.to_numeric(column.where(~column.isin(_MISSING), None))
        except (ValueError, TypeError):
            pass  # text (e.g. lists of numbers): kept as it is
    return table
