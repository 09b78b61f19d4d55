#!/usr/bin/env python3
# The lead of scripts/screenshots/team.yaml: acknowledges the plan.
import sys
sys.stdin.read()
print("Plan: schema, then login, then docs, in that order.")
