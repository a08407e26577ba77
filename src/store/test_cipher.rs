//! A cipher for native tests only: HMAC-SHA256 as a keystream and a tag.
//! It stands in for AES-GCM where no WebCrypto exists (`cargo test`), with
//! the same contract: fresh nonces, authenticated data, `None` on a wrong
//! key or altered bytes. Never used outside tests.

use std::cell::Cell;
use std::rc::Rc;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::sealed::Cipher;
use crate::core::error::Result;

#[derive(Clone)]
pub struct TestCipher {
    key: [u8; 32],
    /// Shared by clones, so no two seals under one key share a nonce.
    nonces: Rc<Cell<u64>>,
}

impl TestCipher {
    pub fn new(seed: u8) -> TestCipher {
        TestCipher { key: [seed; 32], nonces: Rc::new(Cell::new(u64::from(seed) << 40)) }
    }

    fn mac(&self, parts: &[&[u8]]) -> [u8; 32] {
        let mut m = <Hmac<Sha256> as Mac>::new_from_slice(&self.key).expect("any key length");
        for p in parts {
            m.update(&(p.len() as u64).to_le_bytes());
            m.update(p);
        }
        m.finalize().into_bytes().into()
    }

    fn xor(&self, nonce: &[u8], data: &mut [u8]) {
        for (i, block) in data.chunks_mut(32).enumerate() {
            let ks = self.mac(&[b"ks", nonce, &(i as u64).to_le_bytes()]);
            block.iter_mut().zip(ks).for_each(|(b, k)| *b ^= k);
        }
    }
}

impl Cipher for TestCipher {
    async fn seal(&self, aad: &[u8], plain: &[u8]) -> Result<Vec<u8>> {
        let n = self.nonces.get() + 1;
        self.nonces.set(n);
        let mut out = [0u8; 12].to_vec();
        out[..8].copy_from_slice(&n.to_le_bytes());
        let mut ct = plain.to_vec();
        self.xor(&out[..12], &mut ct);
        let tag = self.mac(&[b"tag", &out[..12], aad, &ct]);
        out.extend_from_slice(&ct);
        out.extend_from_slice(&tag[..16]);
        Ok(out)
    }

    async fn open(&self, aad: &[u8], sealed: &[u8]) -> Result<Option<Vec<u8>>> {
        if sealed.len() < 28 {
            return Ok(None);
        }
        let (nonce, rest) = sealed.split_at(12);
        let (ct, tag) = rest.split_at(rest.len() - 16);
        if self.mac(&[b"tag", nonce, aad, ct])[..16] != *tag {
            return Ok(None);
        }
        let mut plain = ct.to_vec();
        self.xor(nonce, &mut plain);
        Ok(Some(plain))
    }
}
