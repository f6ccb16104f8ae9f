"""
Tool: greet
Description: Greet someone by name, in one of a few languages.
Tags: read
Timeout: 5s

Input:
  name (str): Who to greet.
  language (enum(en|fr|es), optional): Language of the greeting. Default: en.

Output:
  greeting (str): The greeting.
"""

GREETINGS = {"en": "Hello", "fr": "Bonjour", "es": "Hola"}


def execute(args):
    return {"greeting": f"{GREETINGS[args.get('language', 'en')]}, {args['name']}!"}
