#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# placeholder: being written
exit 77
