"""Other harnesses' published results, imported as events (bench import draco-results / qa-results).

Every import keeps the file's name, sha256 and its own header figures (`imported_file_registered`),
files its verdicts or grades under an imported regime that is never mixed with ours, and reports
every id that did not join. Validation happens in full before the first append, so a bad file
writes nothing."""
