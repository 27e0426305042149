"""Gold questions: the bank, who gets which question, and how answers are scored."""

from screener.bank.questions import GoldBank, GoldQuestion, load_bank
from screener.bank.scoring import Scoring, parse_number, score_answer

__all__ = ["GoldBank", "GoldQuestion", "Scoring", "load_bank", "parse_number", "score_answer"]
