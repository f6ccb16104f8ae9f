"""
Tool: reading_time
Description: Estimate how long a text takes to read, and count its words and
  sentences.
Tags: read
Timeout: 5s

Input:
  text (str): The text (plain or markdown).
  words_per_minute (int, default=230): Reading speed.

Output:
  minutes (float): Reading time in minutes, rounded to one decimal.
  words (int): Number of words.
  sentences (int): Number of sentences.
"""
import re


def execute(args):
    text = re.sub(r"`{3}.*?`{3}", " ", args["text"], flags=re.S)  # code blocks are skimmed, not read
    words = re.findall(r"[\w'’-]+", text)
    sentences = [s for s in re.split(r"[.!?]+(?:\s|$)", text) if s.strip()]
    wpm = args.get("words_per_minute", 230)
    if wpm <= 0:
        raise ValueError("words_per_minute must be positive")
    return {"minutes": round(len(words) / wpm, 1), "words": len(words), "sentences": len(sentences)}
