"""Execution held by what it does: the host observes each call's effects on the workspace
(``observe``), and an approved plan runs on a branch of its own (``branch``)."""
