"""How ir_measures writes ctxeval's measures: its name and parameters (``alpha_nDCG(alpha=0.5)@20``,
``ERR_IA@20``, ``INST(T=3)``, ``RBP(p=0.8)``, ``Compat(p=0.95)``, ``SDCG@10``), read as the same
measures here (the families' aliases, :mod:`.grammar`) and listed beside ctxeval's own names by
``ctxeval measures`` and the measure reference.

Only families whose ir_measures name gives ir_measures' number are listed (its providers' values: see
the oracle tests of each family). ir_measures' ``ERR@k`` is gdeval's (ctxeval: ``ERR(gmax=4)@k``); its
``Judged@k`` divides by the ranking's length when shorter than k (ctxeval's by k).

>>> ir_measures_name("alpha-nDCG"), ir_measures_name("MAP-IA"), ir_measures_name("RA-nWG") is None
('alpha_nDCG(alpha=0.5,rel=1,judged_only=False)@k', 'AP_IA(rel=1,judged_only=False)', True)
"""

from __future__ import annotations

__all__ = ["IR_MEASURES", "ir_measures_name"]

_CWL = "min_rel=0,max_rel=N"
#: ctxeval family -> the ir_measures measure, as ir_measures writes it (its parameters with their defaults)
IR_MEASURES: dict[str, str] = {
    "P": "P(rel=1)@k",
    "R": "R(rel=1)@k",
    "AP": "AP(rel=1)[@k]",
    "RR": "RR(rel=1)[@k]",
    "Rprec": "Rprec(rel=1)",
    "Success": "Success(rel=1)@k",
    "Bpref": "Bpref(rel=1)",
    "IPrec": "IPrec(rel=1)@r",
    "nDCG": "nDCG(dcg='log2')[@k]",
    "SetP": "SetP(rel=1)",
    "SetR": "SetR(rel=1)",
    "SetF": "SetF(rel=1,beta=1.0)",
    "NumQ": "NumQ",
    "NumRet": "NumRet",
    "NumRel": "NumRel(rel=1)",
    "NumRelRet": "NumRelRet(rel=1)",
    "infAP": "infAP(rel=1)",
    "SetAP": "SetAP(rel=1)",
    "RBP": "RBP(p=0.8[,rel=N])",
    "alpha-nDCG": "alpha_nDCG(alpha=0.5,rel=1,judged_only=False)@k",
    "alpha-DCG": "alpha_DCG(alpha=0.5,rel=1,judged_only=False)@k",
    "ERR-IA": "ERR_IA(rel=1,judged_only=False)@k",
    "nERR-IA": "nERR_IA(rel=1,judged_only=False)@k",
    "NRBP": "NRBP(alpha=0.5,beta=0.5,rel=1)",
    "nNRBP": "nNRBP(alpha=0.5,beta=0.5,rel=1)",
    "P-IA": "P_IA(rel=1,judged_only=False)@k",
    "S-recall": "StRecall(rel=1)@k",
    "MAP-IA": "AP_IA(rel=1,judged_only=False)",
    "INST": f"INST(T=1.0,{_CWL})",
    "INSQ": f"INSQ(T=1.0,{_CWL})",
    "BPM": f"BPM(T=1.0,{_CWL})@k",
    "SDCG": f"SDCG(dcg='log2',{_CWL})@k",
    "NERR8": f"NERR8({_CWL})@k",
    "NERR9": f"NERR9({_CWL})@k",
    "NERR10": f"NERR10(p=0.9,{_CWL})",
    "NERR11": f"NERR11(T=1.0,{_CWL})",
    "Compat": "Compat(p=0.95,normalize=True)",
}


def ir_measures_name(family: str) -> str | None:
    """How ir_measures writes the family, or None when it has no measure giving the same number."""
    return IR_MEASURES.get(family)
