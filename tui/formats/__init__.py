"""Writers: the engine's numbers as the schedulers print them (sshare, sprio, pbsfs), json, csv."""
