def run_fit(k, args, modsign, openssl):
    raise NotImplementedError
