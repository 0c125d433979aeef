"""Statement facts; for now, the one reader of printed numbers and scales (:mod:`engine.facts.numbers`)."""
