
@dPÈâ"**worker:
F@ÈPhZHXºlogªb(¢something failed"a.ccrun M
@¬PhZHXºbadª	