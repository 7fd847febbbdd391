"""What every report figure shares: the paper's conditions and their labels (strict masking
conditions starred as in Appendix E), the metrics' names, the series' colours and markers."""
from __future__ import annotations

CONDITIONS = ["0", "1.1", "1.2", "2.1", "2.2", "3.1", "3.2"]
STRICT = {"2.1", "2.2", "3.1", "3.2"}     # the masked input holds no original narrative (paper §3.6)
LABELS = {"acc": "Accuracy (Acc)", "htr": "Hindsight trap rate (HTR)", "delta_acc": "ΔAcc",
          "delta_htr": "ΔHTR", "air": "Answer instability rate (AIR)", "hbr": "Hindsight bias rate (HBR)"}
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
           "#7f7f7f", "#bcbd22"]
MARKERS = ["o", "s", "D", "^", "v", "P", "X", "<", ">", "h"]
# the metrics whose 95% CI is read against 0 (dim_metrics): HTR and the paired metrics; † marks them
TESTED_AGAINST_ZERO = {"htr", "delta_acc", "delta_htr", "air", "hbr"}


def condition_label(condition: str) -> str:
    return f"{condition}*" if condition in STRICT else condition
