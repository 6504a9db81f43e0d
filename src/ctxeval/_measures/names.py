"""How ir_measures writes ctxeval's measures: its name and parameters (``alpha_nDCG(alpha=0.5)@20``,
``ERR_IA@20``, ``INST(T=3)``, ``RBP(p=0.8)``, ``Compat(p=0.95)``, ``SDCG@10``), read as the same
measures here (the families' aliases, :mod:`.grammar`) and listed beside ctxeval's own names by
``ctxeval measures`` and the measure reference.

Only families whose ir_measures name gives ir_measures' number are listed (its providers' values: see
the oracle tests of each family); ``judged_only=True`` (trec_eval's ``-J``) too, ``SetRelP`` is trec_eval's
``set_relative_P`` and ``Accuracy`` the accuracy provider's pairs. ``nDCG(dcg='exp-log2')@k`` reads as
ctxeval's nDCG with that gain and gives gdeval's numbers (ir_measures runs gdeval.pl for it). Left out:
``ERR@k``, gdeval's, which ctxeval writes ``ERR(gmax=4)@k`` (the same numbers; ctxeval's ERR names the
top grade of its scale, never takes a default); ``Judged@k``, which ir_measures divides by the
ranking's length when shorter than k (ctxeval by k); ``SetP(relative=True)``, ir_measures' other
spelling of ``SetRelP``.

>>> ir_measures_name("alpha-nDCG"), ir_measures_name("MAP-IA"), ir_measures_name("RA-nWG") is None
('alpha_nDCG(alpha=0.5,rel=1,judged_only=False)@k', 'AP_IA(rel=1,judged_only=False)', True)
"""

from __future__ import annotations

__all__ = ["IR_MEASURES", "ir_measures_name"]

_CWL = "min_rel=0,max_rel=N"
_J = "judged_only=False"
#: ctxeval family -> the ir_measures measure, as ir_measures writes it (its parameters with their defaults)
IR_MEASURES: dict[str, str] = {
    "P": f"P(rel=1,{_J})@k",
    "R": f"R(rel=1,{_J})@k",
    "AP": f"AP(rel=1,{_J})[@k]",
    "RR": f"RR(rel=1,{_J})[@k]",
    "Rprec": f"Rprec(rel=1,{_J})",
    "Success": f"Success(rel=1,{_J})@k",
    "Bpref": "Bpref(rel=1)",
    "IPrec": f"IPrec(rel=1,{_J})@r",
    "nDCG": f"nDCG(dcg='log2',{_J})[@k]",
    "SetP": f"SetP(rel=1,{_J})",
    "SetR": "SetR(rel=1)",
    "SetF": f"SetF(rel=1,beta=1.0,{_J})",
    "set_relative_P": f"SetRelP(rel=1,{_J})",
    "Accuracy": "Accuracy(rel=1)[@k]",
    "NumQ": "NumQ",
    "NumRet": "NumRet",
    "NumRel": "NumRel(rel=1)",
    "NumRelRet": "NumRelRet(rel=1)",
    "infAP": "infAP(rel=1)",
    "SetAP": f"SetAP(rel=1,{_J})",
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
