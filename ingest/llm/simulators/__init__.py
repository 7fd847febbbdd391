"""The project's simulators, every one labelled as such wherever its output is stored: the `sim:`
answerers that stand in for a model in the runners (answerers), the audited models of the demo's
HindsightBench panel (auditees) and that fictional panel's data (panel), and the validation
annotators who fill the demo's packets (annotators). They serve the demo and the estimator checks;
no metric of a real model ever comes from one."""
