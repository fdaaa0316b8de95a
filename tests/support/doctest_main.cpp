// doctest_main.cpp: the single test runner for ethost's unit and integration suites.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
