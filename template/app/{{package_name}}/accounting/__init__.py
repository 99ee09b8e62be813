"""Accounting: what each request used and cost, the running totals, and the budgets that hold them.

A turn meets it twice (turns/conversations.py): `Accounting.admit` before a
new turn starts, which takes its holds or refuses it, and `Accounting.count`
when the request ends, which logs what it used and settles the holds.
"""
